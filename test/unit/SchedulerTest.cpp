//===- SchedulerTest.cpp - Continuous batching invariants -----------------===//
#include "engine/Scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace ingot::engine;

namespace {

struct Target {
  size_t length; // prompt + output tokens at which the request ends
};

/// Drives a scheduler like the engine does, with a fake model that
/// "samples" token 7, checking the per-step invariants; returns the steps.
int64_t drive(Scheduler &s, KvBlockManager &m,
              std::map<uint64_t, Target> &targets, int64_t maxSteps,
              std::set<uint64_t> *failedOut = nullptr) {
  const SchedulerOptions &o = s.options();
  int64_t steps = 0;
  while (!targets.empty()) {
    EXPECT_LT(steps, maxSteps) << "requests did not finish";
    if (steps >= maxSteps)
      return steps;
    ++steps;
    // Who was decoding before this step (running, one token left).
    std::set<uint64_t> decoders;
    for (uint64_t id : s.running())
      if (int64_t(s.tokens(id).size()) - s.computed(id) == 1)
        decoders.insert(id);
    std::vector<uint64_t> failed;
    std::vector<ScheduledChunk> plan = s.schedule(&failed);
    for (uint64_t id : failed) {
      targets.erase(id);
      if (failedOut)
        failedOut->insert(id);
    }
    int64_t tokens = 0;
    bool seenPrefill = false;
    std::set<uint64_t> inPlan;
    for (const ScheduledChunk &c : plan) {
      EXPECT_TRUE(inPlan.insert(c.seq).second) << "sequence twice in a step";
      EXPECT_GT(c.count, 0);
      tokens += c.count;
      bool decode = decoders.count(c.seq) != 0;
      if (decode) {
        EXPECT_FALSE(seenPrefill) << "a decode after a prefill chunk";
      }
      seenPrefill |= !decode;
      EXPECT_EQ(c.first, s.computed(c.seq));
      const auto &table = m.table(c.seq);
      EXPECT_GE(int64_t(table.size()) * m.blockSize(), c.first + c.count)
          << "a scheduled token has no slot";
      EXPECT_LE(int64_t(table.size()), o.maxBlocksPerSeq);
      EXPECT_TRUE(s.isRunning(c.seq));
    }
    // A decoder that got no turn must have been preempted (or the budget
    // ran out, which the caller sizes away when it matters).
    EXPECT_LE(tokens, o.maxTokensPerStep);
    EXPECT_LE(int64_t(plan.size()), o.maxSeqs);
    EXPECT_LE(int64_t(s.running().size()), o.maxSeqs);
    EXPECT_EQ(m.checkInvariants(), "");
    s.complete(plan);
    for (const ScheduledChunk &c : plan) {
      if (!c.samples)
        continue;
      auto &t = targets.at(c.seq);
      if (s.tokens(c.seq).size() + 1 >= t.length) {
        s.remove(c.seq);
        targets.erase(c.seq);
      } else {
        s.appendToken(c.seq, 7);
      }
    }
  }
  return steps;
}

TEST(Scheduler, ChunkedPrefillThenDecode) {
  KvBlockManager m(64, 4, true);
  Scheduler s(m, {/*maxTokensPerStep=*/8, /*maxSeqs=*/4, /*blocks=*/16});
  s.add(1, std::vector<int32_t>(20, 1));
  std::vector<uint64_t> failed;
  auto plan = s.schedule(&failed);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].count, 8);
  EXPECT_FALSE(plan[0].samples);
  s.complete(plan);
  s.add(2, std::vector<int32_t>(3, 2));
  plan = s.schedule(&failed);
  ASSERT_EQ(plan.size(), 1u); // the budget goes to 1's next chunk
  EXPECT_EQ(plan[0].seq, 1u);
  EXPECT_EQ(plan[0].count, 8);
  s.complete(plan);
  plan = s.schedule(&failed);
  ASSERT_EQ(plan.size(), 2u); // 1's last 4 tokens, then 2 joins
  EXPECT_EQ(plan[0].seq, 1u);
  EXPECT_EQ(plan[0].count, 4);
  EXPECT_TRUE(plan[0].samples);
  EXPECT_EQ(plan[1].seq, 2u);
  EXPECT_EQ(plan[1].count, 3);
  EXPECT_TRUE(plan[1].samples);
  EXPECT_TRUE(failed.empty());
}

TEST(Scheduler, DecodesComeFirstAndBudgetsHold) {
  KvBlockManager m(256, 4, true);
  Scheduler s(m, {16, 4, 16});
  std::map<uint64_t, Target> targets;
  std::mt19937 rng(1);
  for (uint64_t id = 1; id <= 20; ++id) {
    std::vector<int32_t> prompt(1 + rng() % 30, int32_t(id % 3));
    targets[id] = {prompt.size() + 1 + rng() % 20};
    s.add(id, prompt);
  }
  drive(s, m, targets, 2000);
  EXPECT_EQ(m.numUsed(), 0);
  EXPECT_EQ(s.preemptions(), 0);
}

TEST(Scheduler, TightBudgetPreemptsButEveryRequestFinishes) {
  for (int trial = 0; trial < 100; ++trial) {
    std::mt19937 rng(trial);
    const int64_t bs = 1 + rng() % 4, perSeq = 64 / bs;
    // Exactly one full-context sequence's worth of blocks: the minimum the
    // engine ever allows.
    KvBlockManager m(perSeq, bs, trial % 2 == 0);
    SchedulerOptions o{int64_t(1 + rng() % 16), int64_t(1 + rng() % 8), perSeq};
    o.maxSeqs = std::min(o.maxSeqs, o.maxTokensPerStep);
    Scheduler s(m, o);
    std::map<uint64_t, Target> targets;
    for (uint64_t id = 1; id <= 12; ++id) {
      std::vector<int32_t> prompt(1 + rng() % 40, int32_t(rng() % 2));
      targets[id] = {std::min<size_t>(64, prompt.size() + 1 + rng() % 24)};
      s.add(id, prompt);
    }
    std::set<uint64_t> failed;
    drive(s, m, targets, 20000, &failed);
    EXPECT_TRUE(failed.empty()) << "trial " << trial;
    EXPECT_EQ(m.numUsed(), 0);
    EXPECT_EQ(m.numAvailable(), perSeq);
  }
}

TEST(Scheduler, PreemptsTheMostRecentlyAdmitted) {
  KvBlockManager m(6, 2, false);
  Scheduler s(m, {16, 3, 8});
  std::vector<uint64_t> failed;
  // Three sequences of 4 tokens: 2 blocks each, all 6 blocks used.
  for (uint64_t id = 1; id <= 3; ++id)
    s.add(id, std::vector<int32_t>(4, int32_t(id)));
  auto plan = s.schedule(&failed);
  ASSERT_EQ(plan.size(), 3u);
  s.complete(plan);
  for (uint64_t id = 1; id <= 3; ++id)
    s.appendToken(id, 9);
  EXPECT_EQ(m.numAvailable(), 0);
  // Sequence 1's decode needs a third block: 3, the newest, is preempted.
  plan = s.schedule(&failed);
  EXPECT_EQ(s.preemptions(), 1);
  ASSERT_EQ(s.waiting().size(), 1u);
  EXPECT_EQ(s.waiting().front(), 3u);
  EXPECT_EQ(s.tokens(3).size(), 5u); // keeps its generated token
  EXPECT_EQ(s.computed(3), 0);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].seq, 1u);
  EXPECT_EQ(plan[1].seq, 2u);
  EXPECT_TRUE(failed.empty());
}

TEST(Scheduler, SequenceThatNeverFitsFails) {
  KvBlockManager m(2, 2, false);
  Scheduler s(m, {8, 2, 8}); // a table may hold 8 blocks, the pool has 2
  s.add(1, std::vector<int32_t>(7, 1));
  std::vector<uint64_t> failed;
  for (int step = 0; step < 10 && failed.empty(); ++step)
    s.complete(s.schedule(&failed));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], 1u);
  EXPECT_FALSE(s.contains(1));
  EXPECT_EQ(m.numUsed(), 0);
}

TEST(Scheduler, RemoveFreesBlocksAnywhere) {
  KvBlockManager m(16, 2, true);
  Scheduler s(m, {4, 2, 8});
  s.add(1, std::vector<int32_t>(6, 1));
  s.add(2, std::vector<int32_t>(6, 1));
  s.add(3, std::vector<int32_t>(6, 1));
  std::vector<uint64_t> failed;
  s.complete(s.schedule(&failed));
  s.remove(1); // running, mid-prefill (a cancel)
  s.remove(3); // waiting
  s.complete(s.schedule(&failed));
  s.remove(2);
  EXPECT_EQ(m.numUsed(), 0);
  EXPECT_TRUE(s.running().empty());
  EXPECT_TRUE(s.waiting().empty());
  EXPECT_EQ(m.checkInvariants(), "");
}

} // namespace
