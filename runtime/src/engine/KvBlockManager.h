//===- KvBlockManager.h - Block tables and prefix caching -------*- C++ -*-===//
//
// Gives every sequence a block table on top of KvBlockAllocator and shares
// full blocks between sequences whose tokens agree from the start.
//
// Sharing rule: only FULL blocks whose K/V has been computed are entered in
// the prefix cache, keyed by a hash of (parent block's hash, the block's
// token ids), so a hit means the whole prefix up to and including the block
// is the same. A shared block is never written again: a sequence adopts at
// most the blocks strictly before its last token, so the block it writes
// next is always private. Copy-on-write is therefore never needed.
//
// Reference counts: a block's allocator count is the number of tables that
// hold it, plus one while it is in the prefix cache. A cached block that no
// table holds is "idle": it keeps its contents (a later request may revive
// it) and sits in an LRU list, from which it is evicted only when a fresh
// block is needed and none is free.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/KvCache.h"

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace ingot::engine {

class KvBlockManager {
public:
  KvBlockManager(int64_t numBlocks, int64_t blockSize, bool prefixCaching);

  int64_t numBlocks() const { return allocator_.numBlocks(); }
  int64_t blockSize() const { return blockSize_; }
  /// Blocks a sequence could still get: free ones plus idle cached ones.
  int64_t numAvailable() const;
  /// Blocks held by at least one sequence (idle cached blocks excluded).
  int64_t numUsed() const { return used_; }
  int64_t peakUsed() const { return peakUsed_; }
  int64_t prefixQueries() const { return queries_; }
  int64_t prefixHits() const { return hits_; }

  /// For a sequence holding no blocks: adopts the cached blocks that match
  /// the longest run of full blocks of `tokens` before its last token, and
  /// returns how many tokens they cover (their K/V need no recompute).
  int64_t adoptPrefix(uint64_t seq, const std::vector<int32_t> &tokens);
  /// Undoes an adoption that could not be followed by admission: releases
  /// the blocks and takes its lookups out of the hit/query counts.
  void discardAdoption(uint64_t seq);
  /// Fresh blocks the sequence needs to hold `numTokens` tokens.
  int64_t blocksNeeded(uint64_t seq, int64_t numTokens) const;
  /// Grows the table to hold `numTokens` tokens; false (and no change) when
  /// too few blocks are available.
  bool reserve(uint64_t seq, int64_t numTokens);
  /// Enters the full blocks among the first `computed` tokens (whose K/V is
  /// now written) in the prefix cache.
  void commit(uint64_t seq, const std::vector<int32_t> &tokens,
              int64_t computed);
  /// Drops every block of the sequence (finish, cancel or preemption).
  void release(uint64_t seq);
  /// The sequence's block ids (empty for an unknown sequence).
  const std::vector<int32_t> &table(uint64_t seq) const;
  size_t numSequences() const { return seqs_.size(); }

  /// "" when every internal invariant holds, else what is broken (tests).
  std::string checkInvariants() const;

private:
  struct SeqBlocks {
    std::vector<int32_t> blocks;
    std::vector<uint64_t> hashes; // of the leading full, computed blocks
    int64_t queried = 0, hit = 0; // by the last adoptPrefix
  };
  struct BlockInfo {
    int32_t tableRefs = 0;
    bool cached = false;
    uint64_t hash = 0, parent = 0;
    std::vector<int32_t> tokens; // a cached block's ids, to rule out collisions
    std::list<int32_t>::iterator lru;
  };

  uint64_t hashBlock(uint64_t parent, const int32_t *ids) const;
  /// The cached block holding exactly (parent, ids), or -1.
  int32_t lookup(uint64_t hash, uint64_t parent, const int32_t *ids) const;
  int32_t allocateBlock();
  void addTableRef(int32_t block);
  void dropTableRef(int32_t block);

  int64_t blockSize_;
  bool prefixCaching_;
  KvBlockAllocator allocator_;
  std::vector<BlockInfo> info_;
  std::unordered_map<uint64_t, SeqBlocks> seqs_;
  std::unordered_map<uint64_t, int32_t> cache_; // hash -> block
  std::list<int32_t> idle_;                     // LRU first
  int64_t used_ = 0, peakUsed_ = 0, queries_ = 0, hits_ = 0;
};

} // namespace ingot::engine
