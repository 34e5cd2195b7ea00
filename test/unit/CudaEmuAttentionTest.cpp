//===- CudaEmuAttentionTest.cpp - attention.cuh run on the host -*- C++ -*-===//
//
// Runs pagedKvWrite and pagedAttention (codegen/kernels/cuda/attention.cuh)
// under the emulation harness (test/unit/cuda_emu) for two steps of a
// small batch and compares the cache and the outputs with a float64
// reference written here from runtime/src/cpu/PagedAttention.cpp (not
// calling it). The reference keeps each sequence's K/V rows by position, so
// it knows nothing of slots, block tables or layouts: any addressing slip
// shows. The cache starts as NaN, so a read of a slot never written turns
// the output into NaN.
//
// The batch: block size 4, two sequences whose blocks are out of order in
// the pool. Step 1: sequence A prefills positions 0..8 and B 0..2. Step 2:
// A decodes position 9 over its cached rows, an empty sequence sits between,
// and B prefills 3..7 on top of its cached 0..2 (a chunked prefill).
//
//===----------------------------------------------------------------------===//

#include "attention.cuh"

#include "CudaEmuTestUtil.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

namespace {

using ingot_k::AttnArgs;
using ingot_k::i32;
using ingot_k::i64;
using ingot_k::RopeParams;
using namespace ingot_test;

// Rotated K rows in the cache: f32 rotation of values <= 1, a few ulp of 1
// (CudaEmuRopeTest.cpp).
constexpr double kRopeTol = 1e-6;
// Outputs: f32 dots of <= 256 products of values <= 1, f32 exps and sums of
// <= 10 terms, all ~1e-6 relative; a wrong key, head, offset or mask moves
// an output by ~1e-2 or more.
constexpr double kAttnTol = 1e-5;

constexpr i64 kBlockSize = 4, kBlocks = 12, kTableWidth = 4;
// The cache blocks of sequences A (0) and B (1), in table order.
const i64 kSeqBlocks[2][kTableWidth] = {{7, 2, 10, -1}, {5, 0, -1, -1}};

struct StepDef {
  std::vector<int> rows; // each block-table row's sequence; -1: no tokens
  std::vector<std::pair<int, i64>> tokens; // (row, position), row-ordered
};
const StepDef kSteps[2] = {
    {{0, 1},
     {{0, 0},
      {0, 1},
      {0, 2},
      {0, 3},
      {0, 4},
      {0, 5},
      {0, 6},
      {0, 7},
      {0, 8},
      {1, 0},
      {1, 1},
      {1, 2}}},
    {{0, -1, 1}, {{0, 9}, {2, 3}, {2, 4}, {2, 5}, {2, 6}, {2, 7}}},
};

struct AttnCase {
  bool headMajor; // "block,head,token,dim", else "block,token,head,dim"
  bool merged;    // q, k, v are column ranges of one qkv buffer
  i64 window;
  float scale, softcap;
  RopeParams rope; // used when ROTARY_DIM > 0
};

template <int HEADS, int KV, int D, int ROT, int WARPS, typename I, typename T>
class AttnHarness {
public:
  explicit AttnHarness(const AttnCase &c)
      : c_(c), keys_(kBlocks * kBlockSize * KV * D, nanF()),
        values_(keys_.size(), nanF()) {}

  void runStep(const StepDef &step, std::mt19937 &gen) {
    const i64 n = i64(step.tokens.size()), rows = i64(step.rows.size());
    std::vector<I> pos(n), slot(n), ends(rows, 0);
    std::vector<T> table(rows * kTableWidth, T(-1));
    for (i64 r = 0; r < rows; ++r)
      for (i64 b = 0; step.rows[r] >= 0 && b < kTableWidth; ++b)
        table[r * kTableWidth + b] = T(kSeqBlocks[step.rows[r]][b]);
    for (i64 t = 0; t < n; ++t) {
      const auto [row, p] = step.tokens[t];
      pos[t] = I(p);
      slot[t] = I(kSeqBlocks[step.rows[row]][p / kBlockSize] * kBlockSize +
                  p % kBlockSize);
      for (i64 r = row; r < rows; ++r)
        ends[r] = I(t + 1);
    }
    const AttnArgs a = makeInputs(n, gen);
    ingot_emu::launch({unsigned(n)}, {128}, [&] {
      ingot_k::pagedKvWrite<KV, D, ROT, I>(k_, v_, pos.data(), slot.data(),
                                           keys_.data(), values_.data(), a,
                                           c_.rope, n);
    });
    for (i64 t = 0; t < n; ++t)
      remember(step.rows[step.tokens[t].first], step.tokens[t].second, t,
               i64(slot[t]), a);
    checkCache();
    std::vector<float> out(n * HEADS * D, nanF());
    ingot_emu::launch({HEADS, unsigned(n)}, {WARPS * 32}, [&] {
      ingot_k::pagedAttention<HEADS, KV, D, ROT, WARPS, I, T>(
          q_, pos.data(), table.data(), ends.data(), keys_.data(),
          values_.data(), out.data(), a, c_.rope, n, rows);
    });
    EXPECT_LT(relError(out, reference(step, a)), kAttnTol);
  }

private:
  /// Fresh q/k/v rows for n tokens, separate or merged, and the AttnArgs.
  AttnArgs makeInputs(i64 n, std::mt19937 &gen) {
    const i64 qW = HEADS * D, kvW = KV * D;
    AttnArgs a = {kBlockSize,
                  kTableWidth,
                  kBlockSize * kvW,
                  c_.headMajor ? kBlockSize * D : D,
                  c_.headMajor ? D : kvW,
                  qW,
                  kvW,
                  kvW,
                  0,
                  0,
                  0,
                  qW,
                  c_.scale,
                  c_.softcap,
                  c_.window};
    if (c_.merged) { // [2 pad | q | k | v | 1 pad]
      a.qOffset = 2, a.kOffset = 2 + qW, a.vOffset = 2 + qW + kvW;
      a.qStride = a.kStride = a.vStride = a.vOffset + kvW + 1;
      qBuf_ = randomFloats(n * a.qStride, gen);
      q_ = k_ = v_ = qBuf_.data();
    } else {
      qBuf_ = randomFloats(n * qW, gen);
      kBuf_ = randomFloats(n * kvW, gen);
      vBuf_ = randomFloats(n * kvW, gen);
      q_ = qBuf_.data(), k_ = kBuf_.data(), v_ = vBuf_.data();
    }
    return a;
  }

  /// Token t's K (rotated in double) and V rows, as the reference cache
  /// row of (sequence, position), and where they must sit.
  void remember(int seq, i64 p, i64 t, i64 slot, const AttnArgs &a) {
    Row &row = rows_[{seq, p}];
    row.k.assign(KV * D, 0.0);
    row.v.assign(KV * D, 0.0);
    for (int h = 0; h < KV; ++h) {
      refRopeHead(k_ + t * a.kStride + a.kOffset + h * D, row.k.data() + h * D,
                  p, ROT, D, c_.rope);
      for (int d = 0; d < D; ++d)
        row.v[h * D + d] = v_[t * a.vStride + a.vOffset + h * D + d];
    }
    slotRows_[slot] = {seq, p};
  }

  /// Every written slot holds its rows where the layout says; nothing
  /// else was touched.
  void checkCache() const {
    std::vector<char> touched(keys_.size(), 0);
    std::vector<float> gotK;
    std::vector<double> wantK;
    for (const auto &[slot, key] : slotRows_) {
      const Row &row = rows_.at(key);
      const i64 blk = slot / kBlockSize, off = slot % kBlockSize;
      for (i64 h = 0; h < KV; ++h)
        for (i64 d = 0; d < D; ++d) {
          const i64 at = c_.headMajor
                             ? ((blk * KV + h) * kBlockSize + off) * D + d
                             : ((blk * kBlockSize + off) * KV + h) * D + d;
          touched[at] = 1;
          gotK.push_back(keys_[at]);
          wantK.push_back(row.k[h * D + d]);
          ASSERT_EQ(double(values_[at]), row.v[h * D + d]) << slot;
        }
    }
    EXPECT_LT(relError(gotK, wantK), kRopeTol);
    for (size_t i = 0; i < keys_.size(); ++i)
      if (!touched[i]) {
        ASSERT_TRUE(std::isnan(keys_[i]) && std::isnan(values_[i])) << i;
      }
  }

  /// The step's output in double: each query head against its KV head's
  /// window of its own sequence's rows.
  std::vector<double> reference(const StepDef &step, const AttnArgs &a) const {
    const i64 n = i64(step.tokens.size());
    std::vector<double> out(n * HEADS * D, 0.0), q(D);
    for (i64 t = 0; t < n; ++t) {
      const int seq = step.rows[step.tokens[t].first];
      const i64 p = step.tokens[t].second;
      const i64 j0 = c_.window > 0 ? std::max<i64>(0, p - c_.window + 1) : 0;
      for (int h = 0; h < HEADS; ++h) {
        const int kvh = h / (HEADS / KV);
        refRopeHead(q_ + t * a.qStride + a.qOffset + h * D, q.data(), p, ROT, D,
                    c_.rope);
        std::vector<double> w;
        for (i64 j = j0; j <= p; ++j) {
          const Row &row = rows_.at({seq, j});
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += q[d] * row.k[kvh * D + d];
          s *= double(c_.scale);
          if (c_.softcap > 0)
            s = c_.softcap * std::tanh(s / c_.softcap);
          w.push_back(s);
        }
        const double mx = *std::max_element(w.begin(), w.end());
        double total = 0;
        for (double &x : w)
          total += x = std::exp(x - mx);
        double *o = out.data() + (t * HEADS + h) * D;
        for (i64 j = j0; j <= p; ++j)
          for (int d = 0; d < D; ++d)
            o[d] += w[j - j0] / total * rows_.at({seq, j}).v[kvh * D + d];
      }
    }
    return out;
  }

  struct Row {
    std::vector<double> k, v; // KV heads * D
  };
  AttnCase c_;
  std::vector<float> keys_, values_; // one layer's f32 cache
  std::vector<float> qBuf_, kBuf_, vBuf_;
  const float *q_ = nullptr, *k_ = nullptr, *v_ = nullptr;
  std::map<std::pair<int, i64>, Row> rows_; // (sequence, position)
  std::map<i64, std::pair<int, i64>> slotRows_;
};

template <int HEADS, int KV, int D, int ROT, int WARPS, typename I, typename T>
void runCase(const AttnCase &c, unsigned seed) {
  std::mt19937 gen(seed);
  AttnHarness<HEADS, KV, D, ROT, WARPS, I, T> h(c);
  for (const StepDef &step : kSteps) {
    h.runStep(step, gen);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

// GQA, 4 heads over 2 KV heads, 4 warps: early tokens leave warps empty.
TEST(CudaEmuAttention, GqaTokenMajorI64) {
  runCase<4, 2, 16, 0, 4, i64, i64>(
      {false, false, 0, 0.25f, 0.f, ropeNone(1e4)}, 1);
}

TEST(CudaEmuAttention, GqaHeadMajorMergedQkvI32) {
  runCase<4, 2, 16, 0, 2, i32, i32>({true, true, 0, 0.25f, 0.f, ropeNone(1e4)},
                                    2);
}

// rope_paged_attention, all dims rotated.
TEST(CudaEmuAttention, RopeMergedQkvHeadMajor) {
  runCase<4, 2, 16, 16, 2, i64, i32>({true, true, 0, 0.25f, 0.f, ropeNone(1e4)},
                                     3);
}

// Head dim 40 (lanes 8..31 hold one dim), 24 rotary dims in all three
// llama3 bands, a window of 3 cutting across blocks, softcap.
TEST(CudaEmuAttention, PartialRopeWindowSoftcap) {
  runCase<4, 2, 40, 24, 3, i32, i64>({false, true, 3, 0.5f, 1.f, ropeLlama3()},
                                     4);
}

// One KV head for both query heads, head dim 256 (8 dims per lane), linear
// rope scaling on half the dims, a window of 5.
TEST(CudaEmuAttention, MultiQueryHeadDim256) {
  RopeParams r = ropeNone(1e6);
  r.scaling = 1;
  r.factor = 2.0;
  runCase<2, 1, 256, 128, 2, i64, i64>({true, false, 5, 0.0625f, 0.f, r}, 5);
}

// Plain multi-head attention with one warp (nothing to merge) and softcap.
TEST(CudaEmuAttention, OneWarpSoftcapTokenMajor) {
  runCase<4, 4, 32, 0, 1, i32, i64>(
      {false, false, 0, 0.5f, 0.5f, ropeNone(1e4)}, 6);
}

} // namespace
