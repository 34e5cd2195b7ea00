//===- LinearQ16Test.cpp - "q16" weights and the int8-activation linear ---===//
//
// Activations quantise within half a step, to the same bytes on every ISA;
// every ISA's "q16" kernel (groups of 32 and per channel) gives bitwise
// the portable kernel's sums, which equal the exact integer block sums
// scaled in double to f32 rounding; a row's result does not depend on the
// batch; and through the kernel registry the linear stays within the
// activation-rounding bound of the f32 linear on the dequantised weights.
// The layout itself: Q16LayoutTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearQ16.h"
#include "KernelTestUtil.h"
#include "LlmTestUtil.h"
#include "Q16TestUtil.h"
#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"
#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

using namespace ingot;
using namespace ingot::cpu;
using namespace ingot::test::q16;

namespace {

TEST(Q16Activations, QuantiseWithinHalfAStep) {
  const int64_t m = 3, k = 128;
  std::vector<float> x = test::normalValues(size_t(m * k), 5);
  for (int64_t c = 32; c < 64; ++c)
    x[size_t(c)] = 0.0f; // an all-zero block
  QuantizedRows q;
  q.resize(m, k);
  quantizeRowsQ8(x.data(), 0, m, q);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t b = 0; b < k / 32; ++b) {
      const float d = q.d[size_t(r * (k / 32) + b)];
      int32_t sum = 0;
      for (int64_t i = 0; i < 32; ++i) {
        const int64_t at = r * k + b * 32 + i;
        sum += q.q[size_t(at)];
        ASSERT_LE(std::abs(q.q[size_t(at)]), 127);
        ASSERT_LE(std::fabs(double(q.q[size_t(at)]) * d - x[size_t(at)]),
                  0.5 * d * (1 + 1e-6))
            << at;
      }
      ASSERT_EQ(sum, q.sum[size_t(r * (k / 32) + b)]);
    }
}

/// The kernel sets this CPU can run: the portable one first.
std::vector<const Q16LinearKernels *> kernelSets() {
  std::vector<const Q16LinearKernels *> sets = {&genericQ16LinearKernels()};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c"))
    sets.push_back(&avx2Q16LinearKernels());
  if (__builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512vnni"))
    sets.push_back(&avx512VnniQ16LinearKernels());
  return sets;
}

/// y of `ks` for rows [0, m) over all n outputs.
std::vector<float> runSet(const Q16LinearKernels &ks, const Q16LinearArgs &a,
                          int64_t m) {
  std::vector<float> y(size_t(m * a.n), -1.0f);
  Q16LinearArgs call = a;
  call.y = y.data();
  ks.nk(call, 0, m, 0, a.n);
  return y;
}

/// The sums over x's 32-value blocks in exact integers, scaled and summed
/// in double; the weight's groups are `group` values (32, or k).
double exactOutput(DType t, const std::vector<uint8_t> &rm, int64_t k,
                   const QuantizedRows &x, int64_t r, int64_t j,
                   int64_t group = 32) {
  const int64_t blocks = k / 32, rowBytes = quantRowBytes(t, k, group);
  double acc = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t wb = b * 32 / group, at = b * 32 - wb * group;
    const uint8_t *blk =
        rm.data() + j * rowBytes + wb * quantBlockBytes(t, group);
    uint16_t h[2] = {0, 0};
    std::memcpy(h, blk, size_t(quantHeaderBytes(t)));
    const uint8_t *v = blk + quantHeaderBytes(t) + (t == DType::Q8 ? at : 0);
    int64_t isum = 0;
    for (int64_t i = 0; i < 32; ++i) {
      const int q = t == DType::Q8 ? int8_t(v[i])
                    : i < 16       ? v[i] & 15
                                   : v[i - 16] >> 4;
      isum +=
          int64_t(t == DType::Q4 ? q - 8 : q) * x.q[size_t(r * k + b * 32 + i)];
    }
    const double dx = x.d[size_t(r * blocks + b)];
    acc += double(isum) * halfToFloat(h[0]) * dx;
    if (t == DType::Q4M)
      acc += double(halfToFloat(h[1])) * dx * x.sum[size_t(r * blocks + b)];
  }
  return acc;
}

// 13 rows: the 8-, 4- and 1-row tiles. K = 32: one block, where a weight
// per channel and one in groups of 32 hold the same bytes (every kernel
// must still take the per-channel arithmetic).
TEST(LinearQ16, EveryIsaMatchesTheExactSumsBitwiseAlike) {
  for (const Format &f : kFormats)
    for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 160},
                        {3, 160},
                        {6, 160},
                        {13, 160},
                        {13, 32}}) {
      SCOPED_TRACE(f.name() + " m=" + std::to_string(m) +
                   " k=" + std::to_string(k));
      const DType t = f.t;
      const int64_t n = 48, g = f.groupFor(k);
      const std::vector<uint8_t> rm = rowMajorBlocks(t, n, k, 11, g);
      const std::vector<uint8_t> p = packed(t, rm, n, k, g);
      std::vector<float> xs = test::normalValues(size_t(m * k), 13);
      xs[7] = 40.0f; // an outlier in one block
      const std::vector<float> bias = test::normalValues(size_t(n), 17);
      QuantizedRows x;
      x.resize(m, k);
      quantizeRowsQ8(xs.data(), 0, m, x);
      Q16LinearArgs a;
      a.n = n, a.k = k, a.x = &x, a.w = p.data(), a.wType = t, a.group = g;
      const std::vector<float> ref = runSet(genericQ16LinearKernels(), a, m);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          const double want = exactOutput(t, rm, k, x, r, j, g);
          ASSERT_NEAR(ref[size_t(r * n + j)], want,
                      1e-5 * (1 + std::fabs(want)))
              << r << "," << j;
        }
      a.bias = bias.data();
      const std::vector<float> withBias =
          runSet(genericQ16LinearKernels(), a, m);
      for (const Q16LinearKernels *ks : kernelSets()) {
        SCOPED_TRACE(ks->isa);
        ASSERT_EQ(withBias, runSet(*ks, a, m));
      }
    }
}

TEST(LinearQ16, EveryIsaQuantisesActivationsToTheSameBytes) {
  const int64_t m = 5, k = 96;
  std::vector<float> xs = test::normalValues(size_t(m * k), 31);
  xs[3] = -55.0f;                   // an outlier
  for (int64_t c = 32; c < 64; ++c) // an all-zero block
    xs[size_t(k + c)] = 0.0f;
  // amax 127 makes x * 127 / amax = x: ties that round to even.
  for (int64_t c = 64; c < 96; ++c)
    xs[size_t(2 * k + c)] = c == 64 ? 127.0f : float(c - 80) + 0.5f;
  QuantizedRows want;
  want.resize(m, k);
  quantizeRowsQ8(xs.data(), 0, m, want);
  for (const Q16LinearKernels *ks : kernelSets()) {
    SCOPED_TRACE(ks->isa);
    QuantizedRows got;
    got.resize(m, k);
    ks->quantize(xs.data(), 0, m, got);
    ASSERT_EQ(want.q, got.q);
    ASSERT_EQ(0, std::memcmp(want.d.data(), got.d.data(), want.d.size() * 4));
    ASSERT_EQ(want.sum, got.sum);
  }
}

/// m rows of k values quantised to +127 (row 0, x = 3) and -127 (the
/// others, x = -3).
QuantizedRows saturatedRows(int64_t m, int64_t k) {
  std::vector<float> xs(size_t(m * k), 3.0f);
  std::fill(xs.begin() + k, xs.end(), -3.0f);
  QuantizedRows x;
  x.resize(m, k);
  quantizeRowsQ8(xs.data(), 0, m, x);
  EXPECT_EQ(x.q[0], 127);
  EXPECT_EQ(x.q[size_t(k)], -127);
  return x;
}

// All nibbles 15 against all activations +-127: the largest block sums,
// where 16-bit partial sums (AVX2) would overflow if their bound were off.
TEST(LinearQ16, SaturatedInt4BlocksStayExact) {
  const int64_t n = 32, k = 128, m = 2;
  for (DType t : {DType::Q4, DType::Q4M}) {
    SCOPED_TRACE(dtypeName(t));
    const int64_t blockBytes = quantBlockBytes(t, 32);
    std::vector<uint8_t> rm(size_t(n * (k / 32) * blockBytes), 0xff);
    for (size_t b = 0; b < rm.size(); b += size_t(blockBytes)) {
      rm[b] = 0x00, rm[b + 1] = 0x3c; // d = 1.0
      if (t == DType::Q4M)
        rm[b + 2] = 0x00, rm[b + 3] = 0xbc; // m = -1.0
    }
    const std::vector<uint8_t> p = packed(t, rm, n, k);
    const QuantizedRows x = saturatedRows(m, k);
    Q16LinearArgs a;
    a.n = n, a.k = k, a.x = &x, a.w = p.data(), a.wType = t;
    for (const Q16LinearKernels *ks : kernelSets()) {
      SCOPED_TRACE(ks->isa);
      const std::vector<float> y = runSet(*ks, a, m);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          const double want = exactOutput(t, rm, k, x, r, j);
          ASSERT_NEAR(y[size_t(r * n + j)], want, 1e-5 * std::fabs(want));
        }
    }
  }
}

// q8 -128 (GGUF blocks may hold it; stored as 0) and 127 (stored as 255)
// against x = +-127: the largest products of every ISA's form (AVX2's
// |w| = 128 pairs: 2 * 128 * 127 < 2^15), and per channel over k = 4096
// the largest sums.
TEST(LinearQ16, SaturatedQ8StaysExact) {
  const int64_t n = 16, k = 4096, m = 2;
  const int64_t blockBytes = quantBlockBytes(DType::Q8, k);
  // Rows 0-7 all -128, rows 8-15 all 127; d = 1.
  std::vector<uint8_t> rm(size_t(n * blockBytes), 0x80);
  for (int64_t j = 0; j < n; ++j) {
    uint8_t *row = rm.data() + j * blockBytes;
    row[0] = 0x00, row[1] = 0x3c;
    if (j >= 8)
      std::fill(row + 2, row + blockBytes, uint8_t(0x7f));
  }
  const std::vector<uint8_t> p = packed(DType::Q8, rm, n, k, k);
  const QuantizedRows x = saturatedRows(m, k);
  Q16LinearArgs a;
  a.n = n, a.k = k, a.x = &x, a.w = p.data(), a.wType = DType::Q8, a.group = k;
  for (const Q16LinearKernels *ks : kernelSets()) {
    SCOPED_TRACE(ks->isa);
    const std::vector<float> y = runSet(*ks, a, m);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        // Σ w·q over k values, q = ±127 with dx = 3/127: w·3·k.
        const float want = (j < 8 ? -128.0f : 127.0f) * 3.0f * float(k);
        ASSERT_NEAR(y[size_t(r * n + j)], r == 0 ? want : -want,
                    1e-6 * std::fabs(want))
            << r << "," << j;
      }
  }
}

TEST(LinearQ16, ARowsResultDoesNotDependOnTheBatch) {
  for (const Format &f : {Format{DType::Q4M, 32}, Format{DType::Q8, 0}}) {
    SCOPED_TRACE(f.name());
    const int64_t n = 32, k = 576, m = 13, g = f.groupFor(k);
    const std::vector<uint8_t> p =
        packed(f.t, rowMajorBlocks(f.t, n, k, 19, g), n, k, g);
    const std::vector<float> xs = test::normalValues(size_t(m * k), 23);
    QuantizedRows all, one;
    all.resize(m, k);
    quantizeRowsQ8(xs.data(), 0, m, all);
    Q16LinearArgs a;
    a.n = n, a.k = k, a.w = p.data(), a.wType = f.t, a.group = g;
    a.x = &all;
    const std::vector<float> many = runSet(bestQ16LinearKernels(), a, m);
    for (int64_t r = 0; r < m; ++r) {
      one.resize(1, k);
      quantizeRowsQ8(xs.data() + r * k, 0, 1, one);
      a.x = &one;
      const std::vector<float> single = runSet(bestQ16LinearKernels(), a, 1);
      ASSERT_EQ(0,
                std::memcmp(single.data(), many.data() + r * n, size_t(n) * 4))
          << "row " << r;
    }
  }
}

/// Through the registry: within the bound the activation rounding allows
/// (each x value moves by at most half its block's step, d/2, so an output
/// by at most the sum of |w|·d/2) of the f32 linear on the same weights.
/// 1400 rows of 96 values are over twice what one thread quantises (64 Ki
/// values), so the pool's threads quantise rows too.
TEST(LinearQ16, KernelStaysWithinTheActivationRoundingBound) {
  for (const Format &f : kFormats)
    for (int64_t m : {1, 5, 40, 1400}) {
      SCOPED_TRACE(f.name() + " m=" + std::to_string(m));
      const DType t = f.t;
      const int64_t n = 64, k = 96, g = f.groupFor(k);
      const std::vector<uint8_t> rm = rowMajorBlocks(t, n, k, 29, g);
      test::Tensor wq;
      wq.dtype = t, wq.shape = {n, k}, wq.data = packed(t, rm, n, k, g);
      const std::vector<float> wf = dequantised(t, rm, n, k, g);
      const std::vector<float> xs = test::normalValues(size_t(m * k), 31);
      const test::Tensor x = test::f32({m, k}, xs);
      test::Call c("linear", {&x, &wq}, {test::strAttr("w_layout", "q16")});
      c.groupSizes = {0, g};
      c.layouts = {"", "q16"};
      const test::Tensor y = test::runOk(c);
      ASSERT_EQ(y.shape, (shape::Shape{m, n}));
      const float *got = test::ptr<float>(y);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          double want = 0, bound = 1e-5;
          for (int64_t b = 0; b < k / 32; ++b) { // x's blocks
            float amax = 0;
            for (int64_t i = b * 32; i < b * 32 + 32; ++i)
              amax = std::max(amax, std::fabs(xs[size_t(r * k + i)]));
            for (int64_t i = b * 32; i < b * 32 + 32; ++i) {
              want += double(xs[size_t(r * k + i)]) * wf[size_t(j * k + i)];
              bound += std::fabs(wf[size_t(j * k + i)]) * amax / 127 / 2;
            }
          }
          ASSERT_NEAR(got[r * n + j], want, bound * 1.001) << r << "," << j;
        }
    }
}

} // namespace
