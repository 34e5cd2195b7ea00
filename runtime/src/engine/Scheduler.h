//===- Scheduler.h - Continuous batching with chunked prefill ---*- C++ -*-===//
//
// Decides, step by step, which tokens of which sequences run. Knows nothing
// of the model: a sequence is its token ids (prompt + generated so far) and
// how many of them already have K/V in the cache, so it is unit-testable
// alone. Each step:
//   1. every running sequence with one token left (a decode) gets it, in
//      admission order;
//   2. running sequences still in prefill get chunks from what is left of
//      the token budget;
//   3. waiting sequences are admitted, FIFO, while the sequence and token
//      budgets and the free blocks allow (no preemption for a newcomer).
// When a running sequence needs a block and none is available, the most
// recently admitted running sequence is preempted: its blocks are freed and
// it goes back to the front of the queue keeping its tokens, to be
// recomputed later. A sequence that cannot get a block even when it runs
// alone is reported as failed rather than retried forever.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "engine/KvBlockManager.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ingot::engine {

struct SchedulerOptions {
  int64_t maxTokensPerStep = 1;
  int64_t maxSeqs = 1;
  int64_t maxBlocksPerSeq = 1;
};

/// Tokens [first, first + count) of one sequence run in this step; when
/// `samples`, the chunk reaches the sequence's last token and its logits row
/// gives the next token.
struct ScheduledChunk {
  uint64_t seq = 0;
  int64_t first = 0;
  int64_t count = 0;
  bool samples = false;
};

class Scheduler {
public:
  Scheduler(KvBlockManager &blocks, const SchedulerOptions &options);

  /// Queues a new sequence at the back of the waiting queue.
  void add(uint64_t seq, std::vector<int32_t> tokens);
  /// Forgets a sequence (finished or cancelled) and frees its blocks.
  void remove(uint64_t seq);
  /// Plans the next step; sequences that can never fit are removed and
  /// listed in `failed`. Blocks for every scheduled token are reserved.
  std::vector<ScheduledChunk> schedule(std::vector<uint64_t> *failed);
  /// Records that the chunks ran: their K/V is now in the cache.
  void complete(const std::vector<ScheduledChunk> &chunks);
  /// Appends a sampled token; it runs as the sequence's next decode.
  void appendToken(uint64_t seq, int32_t token);

  bool contains(uint64_t seq) const { return seqs_.count(seq) != 0; }
  const std::vector<int32_t> &tokens(uint64_t seq) const;
  int64_t computed(uint64_t seq) const;
  bool isRunning(uint64_t seq) const;
  const std::vector<uint64_t> &running() const { return running_; }
  const std::deque<uint64_t> &waiting() const { return waiting_; }
  int64_t preemptions() const { return preemptions_; }
  const SchedulerOptions &options() const { return options_; }

private:
  struct Seq {
    std::vector<int32_t> tokens;
    int64_t computed = 0;
    bool running = false;
  };
  /// Tokens of `s` (up to `want` more) that fit in its blocks plus what is
  /// available, within maxBlocksPerSeq.
  int64_t fitting(uint64_t id, const Seq &s, int64_t want) const;
  void preempt(uint64_t id);
  /// Gives `id` a chunk of up to `want` tokens, preempting newer sequences
  /// while it cannot get even `minimum`. Returns the chunk size (0: none,
  /// `id` may itself have been preempted or failed).
  int64_t grant(uint64_t id, int64_t want, int64_t minimum,
                std::vector<ScheduledChunk> *plan,
                std::vector<uint64_t> *failed, int64_t *budget);

  KvBlockManager &blocks_;
  SchedulerOptions options_;
  std::unordered_map<uint64_t, Seq> seqs_;
  std::vector<uint64_t> running_; // in admission order
  std::deque<uint64_t> waiting_;
  int64_t preemptions_ = 0;
};

} // namespace ingot::engine
