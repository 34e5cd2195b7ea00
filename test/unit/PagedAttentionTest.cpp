//===- PagedAttentionTest.cpp - paged_attention against dense attention ---===//
//
// Several sequences whose blocks are scattered through the cache go through
// a prefill step (causal within the step), decode steps that read what
// earlier steps wrote, and a mixed chunked-prefill step; each output row is
// compared with plain dense attention in double over the sequence's full
// K/V history. Shapes cover MHA, GQA, MQA, head_dim not a multiple of any
// vector width, and sliding windows within and across blocks. Then every
// validation error, each of which must leave the cache untouched. Column
// offsets and rope_paged_attention: FusedAttentionTest.cpp. Both cache
// layouts (KvCache.h) run the same scenarios and must give the same bits.
//
// Tolerance: each output is a convex combination of V values; sum p_j|v_j|
// bounds its rounding error, and f32 scores/exp/sums stay within 2e-5 of it.
//
//===----------------------------------------------------------------------===//

#include "IsaTestUtil.h"
#include "LlmTestUtil.h"

#include "cpu/AttentionOps.h"

#include <cstring>

using namespace ingot;
using namespace ingot::test;

namespace {

/// Sequences with K/V histories, blocks taken from a shuffled free list so
/// that every sequence's blocks are scattered through the cache.
class AttnScenario {
public:
  AttnScenario(AttnShape a, int64_t blockSize, int64_t numBlocks, int seqs,
               uint64_t seed,
               KvLayout layout = KvLayout::BlockTokenHeadDim)
      : a_(a), rng_(seed), seqs_(seqs) {
    LlmConfig c = cacheConfig(2, blockSize, a.kvHeads, a.headDim);
    c.kvLayout = kvLayoutName(layout);
    EXPECT_TRUE(storage_.allocate(c, numBlocks).isOk());
    for (int64_t b = 0; b < numBlocks; ++b)
      free_.push_back(b);
    std::shuffle(free_.begin(), free_.end(), rng_.gen);
  }
  const KvCacheView &view() const { return storage_.view(); }
  /// The output of the last step.
  const Tensor &output() const { return out_; }

  /// Runs one step on layer 1 where sequence s gets counts[s] new tokens,
  /// and checks every output row against dense attention.
  void step(const std::vector<int64_t> &counts) {
    const int64_t hd = a_.heads * a_.headDim, kd = a_.kvHeads * a_.headDim;
    const int64_t bs = view().blockSize;
    std::vector<int64_t> pos, slots, ends, seqOf;
    std::vector<int> inStep;
    for (int s = 0; s < int(seqs_.size()); ++s) {
      if (!counts[s])
        continue;
      Seq &q = seqs_[s];
      for (int64_t i = 0; i < counts[s]; ++i, ++q.len) {
        if (q.len % bs == 0) {
          q.blocks.push_back(free_.back());
          free_.pop_back();
        }
        pos.push_back(q.len);
        slots.push_back(q.blocks[q.len / bs] * bs + q.len % bs);
        seqOf.push_back(s);
      }
      inStep.push_back(s);
      ends.push_back(int64_t(pos.size()));
    }
    const int64_t t = int64_t(pos.size());
    Tensor qt = rng_.uniform({t, hd}), kt = rng_.uniform({t, kd});
    Tensor vt = rng_.uniform({t, kd});
    for (int64_t i = 0; i < t; ++i) { // the dense histories
      Seq &q = seqs_[seqOf[i]];
      q.k.insert(q.k.end(), ptr<float>(kt) + i * kd,
                 ptr<float>(kt) + (i + 1) * kd);
      q.v.insert(q.v.end(), ptr<float>(vt) + i * kd,
                 ptr<float>(vt) + (i + 1) * kd);
    }
    size_t width = 1;
    for (int s : inStep)
      width = std::max(width, seqs_[s].blocks.size() + 1); // -1 padded
    std::vector<int64_t> table(inStep.size() * width, -1);
    for (size_t r = 0; r < inStep.size(); ++r)
      std::copy(seqs_[inStep[r]].blocks.begin(), seqs_[inStep[r]].blocks.end(),
                table.begin() + r * width);
    Shape ts{int64_t(inStep.size()), int64_t(width)};
    Tensor bt = a_.table64
                    ? i64(ts, table)
                    : i32(ts, std::vector<int32_t>(table.begin(), table.end()));
    Tensor pt = i64({t}, pos), st = i64({t}, slots);
    Tensor et = i64({int64_t(ends.size())}, ends);
    Tensor out;
    Status s = runAttention({&qt, &kt, &vt, &pt, &st, &bt, &et},
                            attnAttrs(a_, 1), &view(), &out);
    ASSERT_TRUE(s.isOk()) << s.message();
    std::vector<double> ref(t * hd), mag(t * hd);
    const int64_t group = a_.heads / a_.kvHeads;
    for (int64_t i = 0; i < t; ++i) {
      const Seq &q = seqs_[seqOf[i]];
      const int64_t p = pos[i];
      const int64_t lo =
          a_.window ? std::max<int64_t>(0, p - a_.window + 1) : 0;
      for (int64_t h = 0; h < a_.heads; ++h)
        denseAttention(ptr<float>(qt) + i * hd + h * a_.headDim, q.k, q.v, lo,
                       p, h / group, a_, &ref[i * hd + h * a_.headDim],
                       &mag[i * hd + h * a_.headDim]);
    }
    expectClose(out, {t, hd}, ref, 2e-5, 1e-30, &mag);
    out_ = out;
  }

private:
  struct Seq {
    int64_t len = 0;
    std::vector<int64_t> blocks;
    std::vector<float> k, v;
  };
  AttnShape a_;
  Rng rng_;
  KvCacheStorage storage_;
  std::vector<int64_t> free_;
  std::vector<Seq> seqs_;
  Tensor out_;
};

/// Every (slot, KV head) row of every layer holds the same floats in both
/// caches, whatever their layouts.
void expectSameRows(const KvCacheView &x, const KvCacheView &y) {
  ASSERT_EQ(x.numSlots(), y.numSlots());
  const size_t bytes = size_t(x.headDim) * sizeof(float);
  for (int64_t l = 0; l < x.numLayers; ++l)
    for (int64_t slot = 0; slot < x.numSlots(); ++slot)
      for (int64_t h = 0; h < x.numKvHeads; ++h) {
        const int64_t a = x.rowOffset(slot, h), b = y.rowOffset(slot, h);
        ASSERT_EQ(std::memcmp(x.keys[l] + a, y.keys[l] + b, bytes), 0)
            << "K of layer " << l << " slot " << slot << " head " << h;
        ASSERT_EQ(std::memcmp(x.values[l] + a, y.values[l] + b, bytes), 0)
            << "V of layer " << l << " slot " << slot << " head " << h;
      }
}

TEST(PagedAttention, PrefillDecodeAndChunkedAgainstDenseAttention) {
  const AttnShape shapes[] = {
      {4, 4, 16, 0, false}, // multi-head
      {6, 2, 20, 0, true},  // GQA, head_dim not a multiple of 16
      {6, 2, 20, 5, false}, // GQA with a sliding window inside a block
      {4, 1, 64, 9, true},  // MQA, window spanning blocks
      {8, 2, 33, 0, false}, // odd head_dim
      {6, 2, 20, 5, false, 0.5}, // Gemma 2's score soft-cap, biting hard
  };
  uint64_t seed = 700;
  for (const AttnShape &a : shapes) {
    SCOPED_TRACE("H=" + std::to_string(a.heads) + " KV=" +
                 std::to_string(a.kvHeads) + " D=" + std::to_string(a.headDim) +
                 " window=" + std::to_string(a.window) +
                 " softcap=" + std::to_string(a.softcap));
    AttnScenario sc(a, 4, 96, 3, ++seed);
    sc.step({13, 7, 22}); // prefill, causal within the step
    for (int i = 0; i < 3; ++i)
      sc.step({1, 1, 1}); // decode, reading earlier steps from the cache
    sc.step({5, 1, 0});   // chunked prefill next to a decode
    sc.step({0, 0, 1});
    // Layer 0 was never written.
    const KvCacheView &v = sc.view();
    for (int64_t i = 0; i < v.numSlots() * v.slotFloats(); ++i)
      ASSERT_TRUE(v.keys[0][i] == 0.0f && v.values[0][i] == 0.0f);
  }
}

TEST(PagedAttention, LongDecodeWindowsSplitAcrossThreads) {
  // One token per step and a few KV heads leave threads idle, so the kernel
  // cuts each window into slices (>= 128 positions) and merges them.
  const AttnShape shapes[] = {{4, 2, 24, 0, false}, {3, 1, 64, 300, true}};
  uint64_t seed = 750;
  for (const AttnShape &a : shapes) {
    SCOPED_TRACE("KV=" + std::to_string(a.kvHeads) +
                 " window=" + std::to_string(a.window));
    AttnScenario sc(a, 16, 64, 2, ++seed);
    sc.step({700, 37});
    sc.step({1, 0});
    sc.step({1, 1});
  }
}

TEST(PagedAttention, BothCacheLayoutsGiveTheSameBits) {
  // The same scenario (same seed: same tensors, same scattered blocks) on a
  // "block,token,head,dim" and a "block,head,token,dim" cache: every step's
  // output bitwise equal and the same rows in both caches. Short steps on
  // 4-token blocks (MHA, GQA, MQA, windows within and across blocks, odd
  // head_dim, several sequences, chunked prefill), then windows of several
  // 256-position chunks on both work splits (per pair, per chunk).
  struct Case {
    AttnShape a;
    int64_t blockSize, numBlocks;
    std::vector<std::vector<int64_t>> steps;
  };
  const std::vector<std::vector<int64_t>> shortSteps = {
      {13, 7, 22}, {1, 1, 1}, {1, 1, 1}, {5, 1, 0}, {0, 0, 1}};
  const std::vector<std::vector<int64_t>> longSteps = {
      {700, 37}, {1, 0}, {1, 1}, {3, 0}};
  const Case cases[] = {
      {{4, 4, 16, 0, false}, 4, 96, shortSteps},
      {{6, 2, 20, 5, true}, 4, 96, shortSteps},
      {{4, 1, 64, 9, true}, 4, 96, shortSteps},
      {{8, 2, 33, 0, false}, 4, 96, shortSteps},
      {{4, 2, 24, 0, false}, 16, 64, longSteps},
      {{3, 1, 64, 300, true}, 16, 64, longSteps},
  };
  uint64_t seed = 780;
  for (const Case &c : cases) {
    SCOPED_TRACE("H=" + std::to_string(c.a.heads) + " KV=" +
                 std::to_string(c.a.kvHeads) + " D=" +
                 std::to_string(c.a.headDim) +
                 " window=" + std::to_string(c.a.window));
    ++seed;
    const int seqs = int(c.steps[0].size());
    AttnScenario x(c.a, c.blockSize, c.numBlocks, seqs, seed,
                   KvLayout::BlockTokenHeadDim);
    AttnScenario y(c.a, c.blockSize, c.numBlocks, seqs, seed,
                   KvLayout::BlockHeadTokenDim);
    ASSERT_EQ(y.view().layout, KvLayout::BlockHeadTokenDim);
    for (const std::vector<int64_t> &counts : c.steps) {
      x.step(counts);
      y.step(counts);
      ASSERT_FALSE(HasFatalFailure());
      ASSERT_EQ(x.output().shape, y.output().shape);
      ASSERT_TRUE(x.output().data == y.output().data) << "outputs differ";
      expectSameRows(x.view(), y.view());
    }
  }
}

TEST(PagedAttention, InnerLoopsOfEveryIsa) {
  Rng rng(760);
  for (cpu::GemmIsa isa : supportedIsas()) {
    const cpu::AttentionOps &ops = cpu::attentionOps(isa);
    for (int64_t d : {7, 16, 20, 64, 83})
      for (int64_t heads : {1, 3, 4, 6})
        for (int64_t count : {11, 16}) {
          SCOPED_TRACE(std::string(cpu::gemmIsaName(isa)) + " d=" +
                       std::to_string(d) + " heads=" + std::to_string(heads) +
                       " count=" + std::to_string(count));
          const int64_t stride = d + 5, ld = count + 2;
          Tensor q = rng.uniform({heads, d}),
                 rows = rng.uniform({count, stride});
          Tensor p = rng.uniform({heads, ld}, 0.0, 1.0);
          Tensor s = f32({heads, ld}, std::vector<float>(heads * ld, 9.0f));
          Tensor acc = rng.uniform({heads, d});
          std::vector<double> sRef(heads * ld, 9.0), aRef(heads * d);
          std::vector<double> sMag(heads * ld, 1.0), aMag(heads * d);
          for (int64_t h = 0; h < heads; ++h) {
            for (int64_t i = 0; i < count; ++i) {
              double dot = 0, mag = 0;
              for (int64_t j = 0; j < d; ++j) {
                const double t = double(ptr<float>(q)[h * d + j]) *
                                 ptr<float>(rows)[i * stride + j];
                dot += t;
                mag += std::fabs(t);
              }
              sRef[h * ld + i] = 0.5 * dot;
              sMag[h * ld + i] = 0.5 * mag;
            }
            for (int64_t j = 0; j < d; ++j) {
              double a = ptr<float>(acc)[h * d + j], mag = std::fabs(a);
              for (int64_t i = 0; i < count; ++i) {
                const double t = double(ptr<float>(p)[h * ld + i]) *
                                 ptr<float>(rows)[i * stride + j];
                a += t;
                mag += std::fabs(t);
              }
              aRef[h * d + j] = a;
              aMag[h * d + j] = mag;
            }
          }
          ops.scores(heads, d, ptr<float>(q), ptr<float>(rows), count, stride,
                     0.5f, ptr<float>(s), ld);
          ops.accumulate(heads, d, ptr<float>(p), ld, ptr<float>(rows), count,
                         stride, ptr<float>(acc));
          expectClose(s, {heads, ld}, sRef, 1e-6, 1e-30, &sMag);
          expectClose(acc, {heads, d}, aRef, 1e-6, 1e-30, &aMag);
        }
  }
}

/// A score's bits do not depend on which rows are scored with it: a run
/// scored at once equals its rows scored one call each (the AVX2 loop
/// scores several rows together).
TEST(PagedAttention, AScoreDoesNotDependOnItsRun) {
  Rng rng(761);
  for (cpu::GemmIsa isa : supportedIsas()) {
    const cpu::AttentionOps &ops = cpu::attentionOps(isa);
    for (int64_t d : {7, 64, 83})
      for (int64_t heads : {1, 2, 3, 4, 6}) {
        SCOPED_TRACE(std::string(cpu::gemmIsaName(isa)) + " d=" +
                     std::to_string(d) + " heads=" + std::to_string(heads));
        const int64_t count = 16, stride = d + 3;
        Tensor q = rng.uniform({heads, d}), rows = rng.uniform({count, stride});
        std::vector<float> all(size_t(heads * count)), one(all.size());
        ops.scores(heads, d, ptr<float>(q), ptr<float>(rows), count, stride,
                   0.125f, all.data(), count);
        for (int64_t i = 0; i < count; ++i)
          ops.scores(heads, d, ptr<float>(q), ptr<float>(rows) + i * stride, 1,
                     stride, 0.125f, one.data() + i, count);
        EXPECT_EQ(0, std::memcmp(all.data(), one.data(), all.size() * 4));
      }
  }
}

/// Nor do a weighted sum's bits depend on the heads summed with it (the
/// vector loops share each V row between several heads).
TEST(PagedAttention, AWeightedSumDoesNotDependOnItsHeads) {
  Rng rng(762);
  for (cpu::GemmIsa isa : supportedIsas()) {
    const cpu::AttentionOps &ops = cpu::attentionOps(isa);
    for (int64_t d : {7, 64, 83})
      for (int64_t heads : {2, 3, 4, 5, 6})
        for (int64_t count : {3, 11, 16}) {
          SCOPED_TRACE(std::string(cpu::gemmIsaName(isa)) + " d=" +
                       std::to_string(d) + " heads=" + std::to_string(heads) +
                       " count=" + std::to_string(count));
          const int64_t stride = d + 3, ld = count + 1;
          Tensor p = rng.uniform({heads, ld}, 0.0, 1.0);
          Tensor rows = rng.uniform({count, stride});
          Tensor start = rng.uniform({heads, d});
          std::vector<float> all(ptr<float>(start),
                                 ptr<float>(start) + heads * d);
          std::vector<float> one = all;
          ops.accumulate(heads, d, ptr<float>(p), ld, ptr<float>(rows), count,
                         stride, all.data());
          for (int64_t h = 0; h < heads; ++h)
            ops.accumulate(1, d, ptr<float>(p) + h * ld, ld, ptr<float>(rows),
                           count, stride, one.data() + h * d);
          EXPECT_EQ(0, std::memcmp(all.data(), one.data(), all.size() * 4));
        }
  }
}

TEST(PagedAttention, ErrorsLeaveTheCacheUntouched) {
  const AttnShape a{2, 1, 8, 0, false};
  KvCacheStorage storage;
  ASSERT_TRUE(storage.allocate(cacheConfig(1, 4, 1, 8), 4).isOk());
  const KvCacheView *kv = &storage.view();
  Rng rng(710);
  Tensor q = rng.uniform({2, 16}), k = rng.uniform({2, 8}),
         v = rng.uniform({2, 8});
  Tensor pos = i64({2}, {0, 1}), slots = i64({2}, {4, 5});
  Tensor table = i32({1, 2}, {1, -1}), ends = i64({1}, {2});
  auto run = [&](const std::vector<const Tensor *> &ins, const KvCacheView *c,
                 int64_t layer = 0) {
    Tensor out;
    return runAttention(ins, attnAttrs(a, layer), c, &out);
  };
  auto expectError = [&](const Status &s, const std::string &part) {
    ASSERT_FALSE(s.isOk());
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
    for (int64_t i = 0; i < kv->numSlots() * kv->slotFloats(); ++i)
      ASSERT_EQ(kv->keys[0][i], 0.0f) << "the failed step wrote the cache";
  };
  expectError(run({&q, &k, &v, &pos, &slots, &table, &ends}, nullptr),
              "needs a KV cache");
  expectError(run({&q, &k, &v, &pos, &slots, &table, &ends}, kv, 1),
              "layer 1 is out of range");
  Tensor badSlots = i64({2}, {4, 16});
  expectError(run({&q, &k, &v, &pos, &badSlots, &table, &ends}, kv),
              "slot 16 is outside");
  Tensor negSlot = i64({2}, {-1, 5});
  expectError(run({&q, &k, &v, &pos, &negSlot, &table, &ends}, kv), "slot -1");
  Tensor farPos = i64({2}, {0, 8});
  expectError(run({&q, &k, &v, &farPos, &slots, &table, &ends}, kv),
              "block_tables has 2 per sequence");
  Tensor holeTable = i32({1, 2}, {-1, 1});
  expectError(run({&q, &k, &v, &pos, &slots, &holeTable, &ends}, kv),
              "block-table entry 0 is -1");
  Tensor bigTable = i64({1, 2}, {4, 0});
  expectError(run({&q, &k, &v, &pos, &slots, &bigTable, &ends}, kv),
              "block-table entry 0 is 4");
  Tensor shortEnds = i64({1}, {1});
  expectError(run({&q, &k, &v, &pos, &slots, &table, &shortEnds}, kv),
              "query_ends ends at 1");
  Tensor negPos = i64({2}, {0, -3});
  expectError(run({&q, &k, &v, &negPos, &slots, &table, &ends}, kv),
              "negative position");
  // A padded table entry that no window needs is fine.
  EXPECT_TRUE(run({&q, &k, &v, &pos, &slots, &table, &ends}, kv).isOk());
}

} // namespace
