//===- KvBlockManagerTest.cpp - Block tables and prefix caching -----------===//
#include "engine/KvBlockManager.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using ingot::engine::KvBlockManager;

namespace {

std::vector<int32_t> iota(int n, int32_t start = 0) {
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = start + i;
  return v;
}

/// Runs a sequence's prefill the way the scheduler does: adopt, reserve,
/// compute, commit. Returns false when blocks ran out.
bool prefill(KvBlockManager &m, uint64_t seq, const std::vector<int32_t> &t) {
  int64_t done = m.adoptPrefix(seq, t);
  if (!m.reserve(seq, t.size()))
    return false;
  (void)done;
  m.commit(seq, t, t.size());
  return true;
}

TEST(KvBlockManager, TablesGrowAndReleaseWithoutLeak) {
  KvBlockManager m(8, 4, /*prefixCaching=*/false);
  ASSERT_TRUE(prefill(m, 1, iota(9)));
  EXPECT_EQ(m.table(1).size(), 3u);
  EXPECT_EQ(m.numUsed(), 3);
  EXPECT_EQ(m.blocksNeeded(1, 12), 0);
  EXPECT_EQ(m.blocksNeeded(1, 13), 1);
  EXPECT_FALSE(m.reserve(1, 4 * 9)); // 9 blocks > 8
  EXPECT_EQ(m.table(1).size(), 3u);  // unchanged on failure
  m.release(1);
  EXPECT_EQ(m.numUsed(), 0);
  EXPECT_EQ(m.numAvailable(), 8);
  EXPECT_EQ(m.peakUsed(), 3);
  EXPECT_EQ(m.checkInvariants(), "");
}

TEST(KvBlockManager, SharesOnlyFullComputedPrefixBlocks) {
  KvBlockManager m(16, 4, true);
  std::vector<int32_t> a = iota(10); // blocks [0..3] [4..7] + 2
  ASSERT_TRUE(prefill(m, 1, a));
  std::vector<int32_t> b = iota(8); // same two full blocks...
  b.push_back(100);                 // ...then its own token
  EXPECT_EQ(m.adoptPrefix(2, b), 8);
  EXPECT_EQ(m.table(2)[0], m.table(1)[0]);
  EXPECT_EQ(m.table(2)[1], m.table(1)[1]);
  ASSERT_TRUE(m.reserve(2, b.size()));
  EXPECT_NE(m.table(2)[2], m.table(1)[2]); // the partial block is private
  EXPECT_EQ(m.prefixQueries(), 4);         // 2 misses for a, 2 hits for b
  EXPECT_EQ(m.prefixHits(), 2);
  m.adoptPrefix(5, b); // a failed admission is not counted
  m.discardAdoption(5);
  EXPECT_EQ(m.prefixQueries(), 4);
  EXPECT_EQ(m.prefixHits(), 2);
  EXPECT_TRUE(m.table(5).empty());
  // Exactly 8 tokens: the second block holds the last token, so only the
  // first may be adopted (a shared block is never written).
  EXPECT_EQ(m.adoptPrefix(3, iota(8)), 4);
  // A different first block shares nothing, even with equal later blocks.
  std::vector<int32_t> c = iota(10);
  c[0] = 99;
  EXPECT_EQ(m.adoptPrefix(4, c), 0);
  EXPECT_EQ(m.checkInvariants(), "");
  for (uint64_t s : {1, 2, 3, 4})
    m.release(s);
  EXPECT_EQ(m.numUsed(), 0);
  EXPECT_EQ(m.numAvailable(), 16);
  EXPECT_EQ(m.checkInvariants(), "");
}

TEST(KvBlockManager, IdleCachedBlocksAreRevivedThenEvicted) {
  KvBlockManager m(4, 2, true);
  ASSERT_TRUE(prefill(m, 1, iota(5))); // 2 full blocks cached, 1 partial
  m.release(1);
  EXPECT_EQ(m.numUsed(), 0);
  EXPECT_EQ(m.numAvailable(), 4);
  EXPECT_EQ(m.adoptPrefix(2, iota(5)), 4); // revived from the idle list
  m.release(2);
  // Needing every block evicts the cached ones.
  ASSERT_TRUE(m.reserve(3, 8));
  EXPECT_EQ(m.checkInvariants(), "");
  m.release(3);
  EXPECT_EQ(m.adoptPrefix(4, iota(5)), 0); // evicted: nothing to adopt
  m.release(4);
  EXPECT_EQ(m.checkInvariants(), "");
}

/// Random admit / grow / decode / finish / cancel / preempt sequences over
/// a small token alphabet (so prefixes collide often), checking after every
/// operation that counts add up and that any block two tables share sits at
/// the same index of both, within an identical full-block prefix.
TEST(KvBlockManager, RandomOperationsKeepInvariants) {
  for (int trial = 0; trial < 300; ++trial) {
    std::mt19937 rng(trial);
    const int64_t bs = 1 + rng() % 4, numBlocks = 4 + rng() % 28;
    KvBlockManager m(numBlocks, bs, trial % 5 != 0);
    std::map<uint64_t, std::vector<int32_t>> live; // tokens with K/V
    uint64_t next = 1;
    for (int op = 0; op < 200; ++op) {
      unsigned kind = rng() % 10;
      if (kind < 4 || live.empty()) { // admit with a shared-ish prompt
        std::vector<int32_t> t(1 + rng() % (4 * bs + 3));
        for (auto &id : t)
          id = int32_t(rng() % 3);
        uint64_t s = next++;
        m.adoptPrefix(s, t);
        if (m.reserve(s, t.size())) {
          m.commit(s, t, t.size());
          live[s] = t;
        } else {
          m.release(s); // could not be admitted: give back what it adopted
        }
      } else {
        auto it = live.begin();
        std::advance(it, rng() % live.size());
        if (kind < 8) { // decode one token
          std::vector<int32_t> t = it->second;
          t.push_back(int32_t(rng() % 3));
          if (m.reserve(it->first, t.size())) {
            m.commit(it->first, t, t.size());
            it->second = t;
          } else { // preempt it, as the scheduler would
            m.release(it->first);
            live.erase(it);
          }
        } else { // finish, cancel or preempt: all release
          m.release(it->first);
          live.erase(it);
        }
      }
      ASSERT_EQ(m.checkInvariants(), "") << "trial " << trial << " op " << op;
      ASSERT_LE(m.numUsed(), numBlocks);
      std::map<int32_t, std::pair<uint64_t, size_t>> owner;
      for (const auto &[s, t] : live) {
        const auto &table = m.table(s);
        ASSERT_GE(int64_t(table.size()) * bs, int64_t(t.size()));
        for (size_t i = 0; i < table.size(); ++i) {
          auto [o, fresh] = owner.emplace(table[i], std::make_pair(s, i));
          if (fresh)
            continue;
          auto [s2, i2] = o->second;
          ASSERT_EQ(i, i2) << "shared block at different indices";
          const auto &t2 = live[s2];
          size_t end = (i + 1) * bs;
          ASSERT_LT(end, t.size() + 1);
          ASSERT_LE(end, t2.size());
          ASSERT_TRUE(std::equal(t.begin(), t.begin() + end, t2.begin()))
              << "shared block under different prefixes";
        }
      }
    }
    for (const auto &[s, t] : live)
      m.release(s);
    EXPECT_EQ(m.numUsed(), 0);
    EXPECT_EQ(m.numAvailable(), numBlocks) << "leak in trial " << trial;
    EXPECT_EQ(m.checkInvariants(), "");
  }
}

} // namespace
