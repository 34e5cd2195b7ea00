//===- KvBlockManager.cpp - Block tables and prefix caching ---------------===//
#include "engine/KvBlockManager.h"

#include <algorithm>
#include <cstring>

namespace ingot::engine {
namespace {

constexpr uint64_t kRootHash = 0x9e3779b97f4a7c15ull;

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64 finaliser over the running state: cheap and well spread.
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

const std::vector<int32_t> kNoBlocks;

} // namespace

KvBlockManager::KvBlockManager(int64_t numBlocks, int64_t blockSize,
                               bool prefixCaching)
    : blockSize_(blockSize > 0 ? blockSize : 1), prefixCaching_(prefixCaching),
      allocator_(numBlocks), info_(size_t(std::max<int64_t>(numBlocks, 0))) {}

int64_t KvBlockManager::numAvailable() const {
  return allocator_.numFree() + static_cast<int64_t>(idle_.size());
}

uint64_t KvBlockManager::hashBlock(uint64_t parent, const int32_t *ids) const {
  uint64_t h = mix(parent, uint64_t(blockSize_));
  for (int64_t i = 0; i < blockSize_; ++i)
    h = mix(h, uint32_t(ids[i]));
  return h;
}

int32_t KvBlockManager::lookup(uint64_t hash, uint64_t parent,
                               const int32_t *ids) const {
  auto it = cache_.find(hash);
  if (it == cache_.end())
    return -1;
  const BlockInfo &b = info_[it->second];
  // The hash only finds the candidate; equality of the parent and the ids
  // makes a collision harmless.
  if (b.parent != parent ||
      std::memcmp(b.tokens.data(), ids, sizeof(int32_t) * blockSize_) != 0)
    return -1;
  return it->second;
}

void KvBlockManager::addTableRef(int32_t block) {
  BlockInfo &b = info_[block];
  if (b.tableRefs++ == 0) {
    ++used_;
    peakUsed_ = std::max(peakUsed_, used_);
  }
}

void KvBlockManager::dropTableRef(int32_t block) {
  BlockInfo &b = info_[block];
  if (--b.tableRefs == 0) {
    --used_;
    if (b.cached) // keep the contents for a later request, evictable
      b.lru = idle_.insert(idle_.end(), block);
  }
  allocator_.release(block);
}

int32_t KvBlockManager::allocateBlock() {
  int64_t block = allocator_.allocate();
  if (block < 0 && !idle_.empty()) {
    // Evict the least recently idled cached block.
    int32_t victim = idle_.front();
    idle_.pop_front();
    BlockInfo &v = info_[victim];
    cache_.erase(v.hash);
    v.cached = false;
    v.tokens.clear();
    allocator_.release(victim);
    block = allocator_.allocate();
  }
  if (block < 0)
    return -1;
  // allocate() gave one reference: it is the table's.
  BlockInfo &b = info_[block];
  b.tableRefs = 1;
  ++used_;
  peakUsed_ = std::max(peakUsed_, used_);
  return static_cast<int32_t>(block);
}

int64_t KvBlockManager::adoptPrefix(uint64_t seq,
                                    const std::vector<int32_t> &tokens) {
  SeqBlocks &s = seqs_[seq];
  if (!prefixCaching_ || !s.blocks.empty() || tokens.empty())
    return static_cast<int64_t>(s.blocks.size()) * blockSize_;
  // Blocks strictly before the last token: the block holding it is written
  // by this sequence, so it must stay private.
  int64_t full = (static_cast<int64_t>(tokens.size()) - 1) / blockSize_;
  queries_ += full;
  s.queried = full;
  s.hit = 0;
  uint64_t parent = kRootHash;
  for (int64_t i = 0; i < full; ++i) {
    const int32_t *ids = tokens.data() + i * blockSize_;
    uint64_t h = hashBlock(parent, ids);
    int32_t block = lookup(h, parent, ids);
    if (block < 0)
      break;
    BlockInfo &b = info_[block];
    if (b.tableRefs == 0)
      idle_.erase(b.lru); // revived
    allocator_.retain(block);
    addTableRef(block);
    s.blocks.push_back(block);
    s.hashes.push_back(h);
    parent = h;
    ++hits_;
    ++s.hit;
  }
  return static_cast<int64_t>(s.blocks.size()) * blockSize_;
}

void KvBlockManager::discardAdoption(uint64_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return;
  queries_ -= it->second.queried;
  hits_ -= it->second.hit;
  release(seq);
}

int64_t KvBlockManager::blocksNeeded(uint64_t seq, int64_t numTokens) const {
  int64_t want = (numTokens + blockSize_ - 1) / blockSize_;
  auto it = seqs_.find(seq);
  int64_t have = it == seqs_.end() ? 0 : int64_t(it->second.blocks.size());
  return std::max<int64_t>(0, want - have);
}

bool KvBlockManager::reserve(uint64_t seq, int64_t numTokens) {
  int64_t need = blocksNeeded(seq, numTokens);
  if (need > numAvailable())
    return false;
  SeqBlocks &s = seqs_[seq];
  for (int64_t i = 0; i < need; ++i)
    s.blocks.push_back(allocateBlock()); // cannot fail: checked above
  return true;
}

void KvBlockManager::commit(uint64_t seq, const std::vector<int32_t> &tokens,
                            int64_t computed) {
  auto it = seqs_.find(seq);
  if (!prefixCaching_ || it == seqs_.end())
    return;
  SeqBlocks &s = it->second;
  int64_t full = std::min<int64_t>(computed, tokens.size()) / blockSize_;
  full = std::min<int64_t>(full, s.blocks.size());
  for (int64_t i = static_cast<int64_t>(s.hashes.size()); i < full; ++i) {
    uint64_t parent = i ? s.hashes[i - 1] : kRootHash;
    const int32_t *ids = tokens.data() + i * blockSize_;
    uint64_t h = hashBlock(parent, ids);
    s.hashes.push_back(h);
    // Another block may already hold the same prefix (two sequences
    // computed it in the same step); this one then stays private.
    if (cache_.count(h))
      continue;
    BlockInfo &b = info_[s.blocks[i]];
    b.cached = true;
    b.hash = h;
    b.parent = parent;
    b.tokens.assign(ids, ids + blockSize_);
    cache_.emplace(h, s.blocks[i]);
    allocator_.retain(s.blocks[i]); // the cache's own reference
  }
}

void KvBlockManager::release(uint64_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return;
  // Last block first, so that the LRU evicts a prefix's tail before its
  // head (the head is what other requests are likeliest to share).
  for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b)
    dropTableRef(*b);
  seqs_.erase(it);
}

const std::vector<int32_t> &KvBlockManager::table(uint64_t seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? kNoBlocks : it->second.blocks;
}

std::string KvBlockManager::checkInvariants() const {
  std::vector<int32_t> refs(info_.size(), 0);
  for (const auto &[id, s] : seqs_) {
    for (int32_t b : s.blocks) {
      if (b < 0 || b >= numBlocks())
        return "sequence " + std::to_string(id) + " holds invalid block " +
               std::to_string(b);
      ++refs[b];
    }
    if (s.hashes.size() > s.blocks.size())
      return "sequence " + std::to_string(id) + " hashes more than it holds";
  }
  int64_t used = 0, idle = 0, cached = 0;
  for (size_t b = 0; b < info_.size(); ++b) {
    const BlockInfo &i = info_[b];
    std::string name = "block " + std::to_string(b);
    if (i.tableRefs != refs[b])
      return name + ": tableRefs " + std::to_string(i.tableRefs) + " but " +
             std::to_string(refs[b]) + " tables hold it";
    if (allocator_.refCount(b) != refs[b] + (i.cached ? 1 : 0))
      return name + ": allocator count " +
             std::to_string(allocator_.refCount(b)) + " != tables " +
             std::to_string(refs[b]) + " + cache " + std::to_string(i.cached);
    used += refs[b] > 0;
    idle += i.cached && refs[b] == 0;
    cached += i.cached;
    if (i.cached) {
      auto it = cache_.find(i.hash);
      if (it == cache_.end() || it->second != int32_t(b))
        return name + " is cached but not in the hash map";
    }
  }
  if (used != used_)
    return "used " + std::to_string(used_) + " but " + std::to_string(used) +
           " blocks are held";
  if (idle != int64_t(idle_.size()) || cached != int64_t(cache_.size()))
    return "idle list or hash map out of step with the blocks";
  for (int32_t b : idle_)
    if (!info_[b].cached || info_[b].tableRefs != 0)
      return "idle list holds block " + std::to_string(b) + " in use";
  if (allocator_.numFree() + allocator_.numUsed() != numBlocks() ||
      allocator_.numUsed() != used + idle)
    return "free + used != total";
  return "";
}

} // namespace ingot::engine
