//===- Scheduler.cpp - Continuous batching with chunked prefill -----------===//
#include "engine/Scheduler.h"

#include <algorithm>

namespace ingot::engine {
namespace {
const std::vector<int32_t> kNoTokens;
} // namespace

Scheduler::Scheduler(KvBlockManager &blocks, const SchedulerOptions &options)
    : blocks_(blocks), options_(options) {
  options_.maxTokensPerStep = std::max<int64_t>(1, options_.maxTokensPerStep);
  options_.maxSeqs = std::max<int64_t>(1, options_.maxSeqs);
  options_.maxBlocksPerSeq = std::max<int64_t>(1, options_.maxBlocksPerSeq);
}

void Scheduler::add(uint64_t seq, std::vector<int32_t> tokens) {
  Seq &s = seqs_[seq];
  s.tokens = std::move(tokens);
  waiting_.push_back(seq);
}

void Scheduler::remove(uint64_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return;
  blocks_.release(seq);
  if (it->second.running)
    running_.erase(std::find(running_.begin(), running_.end(), seq));
  else
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), seq));
  seqs_.erase(it);
}

const std::vector<int32_t> &Scheduler::tokens(uint64_t seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? kNoTokens : it->second.tokens;
}

int64_t Scheduler::computed(uint64_t seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : it->second.computed;
}

bool Scheduler::isRunning(uint64_t seq) const {
  auto it = seqs_.find(seq);
  return it != seqs_.end() && it->second.running;
}

int64_t Scheduler::fitting(uint64_t id, const Seq &s, int64_t want) const {
  int64_t bs = blocks_.blockSize();
  int64_t blocks =
      static_cast<int64_t>(blocks_.table(id).size()) + blocks_.numAvailable();
  int64_t capacity = std::min(blocks, options_.maxBlocksPerSeq) * bs;
  return std::clamp<int64_t>(capacity - s.computed, 0, want);
}

void Scheduler::preempt(uint64_t id) {
  Seq &s = seqs_[id];
  blocks_.release(id);
  s.computed = 0;
  s.running = false;
  running_.erase(std::find(running_.begin(), running_.end(), id));
  // Preempted newest-first, so pushing each to the front keeps the
  // preempted ones in admission order ahead of the never-admitted ones.
  waiting_.push_front(id);
  ++preemptions_;
}

int64_t Scheduler::grant(uint64_t id, int64_t want, int64_t minimum,
                         std::vector<ScheduledChunk> *plan,
                         std::vector<uint64_t> *failed, int64_t *budget) {
  Seq &s = seqs_[id];
  int64_t take = fitting(id, s, want);
  while (take < minimum) {
    uint64_t victim = running_.back();
    if (victim == id) {
      if (running_.size() == 1) { // alone and still short: never fits
        failed->push_back(id);
        remove(id);
      } else {
        preempt(id);
      }
      return 0;
    }
    // The victim is newer than `id`; undo its part of this step's plan.
    for (auto c = plan->begin(); c != plan->end(); ++c)
      if (c->seq == victim) {
        *budget += c->count;
        plan->erase(c);
        break;
      }
    preempt(victim);
    take = fitting(id, s, want);
  }
  blocks_.reserve(id, s.computed + take);
  plan->push_back(
      {id, s.computed, take, s.computed + take == int64_t(s.tokens.size())});
  *budget -= take;
  return take;
}

std::vector<ScheduledChunk> Scheduler::schedule(std::vector<uint64_t> *failed) {
  std::vector<ScheduledChunk> plan;
  int64_t budget = options_.maxTokensPerStep;
  int64_t preemptionsBefore = preemptions_;
  // Decodes first, then the chunks of running prefills, both oldest first.
  for (bool decodes : {true, false}) {
    std::vector<uint64_t> order = running_;
    for (uint64_t id : order) {
      if (budget <= 0)
        break;
      auto it = seqs_.find(id);
      if (it == seqs_.end() || !it->second.running)
        continue; // preempted or failed earlier in this step
      int64_t left = int64_t(it->second.tokens.size()) - it->second.computed;
      if (left <= 0 || (left == 1) != decodes)
        continue;
      bool planned = std::any_of(plan.begin(), plan.end(),
                                 [&](const auto &c) { return c.seq == id; });
      if (!planned)
        grant(id, std::min(left, budget), 1, &plan, failed, &budget);
    }
  }
  // Admit newcomers; never after a preemption, which would only thrash.
  while (budget > 0 && !waiting_.empty() &&
         int64_t(running_.size()) < options_.maxSeqs &&
         preemptions_ == preemptionsBefore) {
    uint64_t id = waiting_.front();
    Seq &s = seqs_[id];
    s.computed = blocks_.adoptPrefix(id, s.tokens);
    int64_t left = int64_t(s.tokens.size()) - s.computed;
    int64_t take = fitting(id, s, std::min(left, budget));
    if (take <= 0) {
      waiting_.pop_front();
      bool alone = running_.empty() && plan.empty();
      blocks_.discardAdoption(id); // retried later: count its lookups then
      s.computed = 0;
      if (alone) { // nothing else holds blocks: it can never fit
        failed->push_back(id);
        seqs_.erase(id);
        continue;
      }
      waiting_.push_front(id);
      break;
    }
    waiting_.pop_front();
    s.running = true;
    running_.push_back(id);
    blocks_.reserve(id, s.computed + take);
    plan.push_back(
        {id, s.computed, take, s.computed + take == int64_t(s.tokens.size())});
    budget -= take;
  }
  return plan;
}

void Scheduler::complete(const std::vector<ScheduledChunk> &chunks) {
  for (const ScheduledChunk &c : chunks) {
    auto it = seqs_.find(c.seq);
    if (it == seqs_.end() || it->second.computed != c.first)
      continue;
    it->second.computed += c.count;
    blocks_.commit(c.seq, it->second.tokens, it->second.computed);
  }
}

void Scheduler::appendToken(uint64_t seq, int32_t token) {
  auto it = seqs_.find(seq);
  if (it != seqs_.end())
    it->second.tokens.push_back(token);
}

} // namespace ingot::engine
