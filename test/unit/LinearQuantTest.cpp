//===- LinearQuantTest.cpp - Quantised weight formats and linear kernels --===//
//
// The block formats round-trip within half a quantisation step, hold
// llama.cpp's Q8_0/Q4_0/Q4_1 layouts, and the quantised "nk" kernels of
// every ISA compute, from the same packed bytes, what a naive double loop
// over the dequantised values computes (to f32 rounding), bitwise equal to
// each other and independent of how many rows are in the batch; through the
// kernel registry they equal the f32 linear on the dequantised weights.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"
#include "cpu/KernelUtil.h"
#include "cpu/LinearQuant.h"
#include "ingot/Quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace ingot;
using namespace ingot::cpu;

namespace {

struct Case {
  DType format;
  int64_t k, group;
};

const Case kCases[] = {
    {DType::Q8, 64, 32},   {DType::Q8, 72, 32},   {DType::Q8, 576, 576},
    {DType::Q4, 64, 32},   {DType::Q4, 576, 128}, {DType::Q4, 100, 48},
    {DType::Q4M, 64, 32},  {DType::Q4M, 72, 32},  {DType::Q4M, 130, 64},
    {DType::F8E4M3, 96, 96}, {DType::F8E4M3, 70, 32},
};

std::string describe(const Case &c) {
  return std::string(dtypeName(c.format)) + " k=" + std::to_string(c.k) +
         " group=" + std::to_string(c.group);
}

TEST(Quant, BlockSizesMatchLlamaCppAtGroup32) {
  EXPECT_EQ(quantBlockBytes(DType::Q8, 32), 34);  // Q8_0
  EXPECT_EQ(quantBlockBytes(DType::Q4, 32), 18);  // Q4_0
  EXPECT_EQ(quantBlockBytes(DType::Q4M, 32), 20); // Q4_1
  EXPECT_EQ(quantRowBytes(DType::Q4, 576, 128), 4 * 66 + 34);
  EXPECT_EQ(quantRowBytes(DType::Q4, 33, 32), 18 + 2 + 1);
  EXPECT_DOUBLE_EQ(quantBitsPerWeight(DType::Q8, 64, 32), 8.5);
  EXPECT_EQ(quantTensorBytes(DType::Q8, 4, 64, 0), -1);
  EXPECT_EQ(quantTensorBytes(DType::F32, 4, 64, 32), -1);
  EXPECT_EQ(quantTensorBytes(DType::Q8, int64_t(1) << 41, 64, 32), -1);
}

TEST(Quant, RoundTripWithinHalfAStep) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(describe(c));
    std::vector<float> x = test::normalValues(size_t(c.k), 7);
    x[3] = 0;
    std::vector<uint8_t> q(size_t(quantRowBytes(c.format, c.k, c.group)));
    quantizeRow({c.format, c.group}, x.data(), c.k, q.data());
    std::vector<float> back(size_t(c.k));
    dequantizeRow(c.format, c.group, q.data(), c.k, back.data());
    for (int64_t k0 = 0; k0 < c.k; k0 += c.group) {
      const int64_t g = std::min(c.group, c.k - k0);
      float lo = x[k0], hi = x[k0], amax = 0;
      for (int64_t i = k0; i < k0 + g; ++i)
        lo = std::min(lo, x[i]), hi = std::max(hi, x[i]),
        amax = std::max(amax, std::fabs(x[i]));
      for (int64_t i = k0; i < k0 + g; ++i) {
        // Half a step, and a little for the f16 rounding of the scale.
        double bound;
        switch (c.format) {
        case DType::Q8: bound = amax / 127.0 * 0.51; break;
        case DType::Q4:
          // As Q4_0, the largest magnitude maps to -8 steps: on the other
          // side the range ends at +7, so values past 7.5 steps are clamped
          // (at most a step off); the rest round to half a step.
          bound = amax / 8.0 * (std::fabs(x[i]) > amax * 7.5 / 8 ? 1.01 : 0.51);
          break;
        case DType::Q4M: bound = (hi - lo) / 15.0 * 0.51 + 1e-3 * amax; break;
        default: bound = std::fabs(x[i]) / 16.0 * 1.01 + amax / 448 / 512; break;
        }
        EXPECT_NEAR(back[i], x[i], bound) << "value " << i;
      }
    }
  }
}

TEST(Quant, ZeroGroupsAndExtremesStayFinite) {
  for (DType f : {DType::Q8, DType::Q4, DType::Q4M, DType::F8E4M3}) {
    SCOPED_TRACE(dtypeName(f));
    std::vector<float> x(64, 0.0f);
    x[40] = 65000.0f, x[41] = -65000.0f, x[42] = 1e-7f;
    std::vector<uint8_t> q(size_t(quantRowBytes(f, 64, 32)));
    quantizeRow({f, 32}, x.data(), 64, q.data());
    std::vector<float> back(64);
    dequantizeRow(f, 32, q.data(), 64, back.data());
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(back[i], 0.0f) << i;
    // q4's clamped side is a whole step (65000 / 8) off, the others less.
    EXPECT_NEAR(back[40], 65000.0f, 65000.0f / 8 * 1.01);
    EXPECT_NEAR(back[41], -65000.0f, 65000.0f / 8 * 1.01);
    for (float v : back)
      EXPECT_TRUE(std::isfinite(v));
  }
  std::vector<float> bad = {1.0f, std::nanf("")};
  std::vector<uint8_t> q(64);
  EXPECT_FALSE(
      quantizeTensor({DType::Q8, 32}, DType::F32, bad.data(), 1, 2, q.data())
          .isOk());
}

TEST(Quant, E4m3MatchesTheFormat) {
  EXPECT_EQ(floatToE4m3(448.0f), 0x7e);
  EXPECT_EQ(floatToE4m3(1e9f), 0x7e);
  EXPECT_EQ(floatToE4m3(-1.0f), 0xb8);
  EXPECT_EQ(floatToE4m3(std::ldexp(1.0f, -9)), 0x01);
  EXPECT_EQ(floatToE4m3(0.0f), 0x00);
  for (int v = 0; v < 256; ++v) {
    if ((v & 0x7f) == 0x7f)
      continue; // NaN codes
    EXPECT_EQ(floatToE4m3(e4m3ToFloat(uint8_t(v))), v == 0x80 ? 0x80 : v) << v;
  }
}

/// Kernel sets of one lane width: the portable one first, then the ISA's
/// when this CPU has it.
std::vector<const QuantLinearKernels *> supportedSets(int lanes) {
  std::vector<const QuantLinearKernels *> sets = {
      &genericQuantLinearKernels(lanes)};
  const bool avx2 = __builtin_cpu_supports("avx2") &&
                    __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  if (lanes == 8 && avx2)
    sets.push_back(&avx2QuantLinearKernels());
  if (lanes == 16 && avx2 && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    sets.push_back(&avx512QuantLinearKernels());
  return sets;
}

/// `n` rows of random weights of case c (one row shifted so that q4m's
/// minimum matters), quantised.
std::vector<uint8_t> quantisedWeights(const Case &c, int64_t n, uint32_t seed) {
  std::vector<float> wf = test::normalValues(size_t(n * c.k), seed, 0.05f);
  for (int64_t i = 0; i < c.k; ++i)
    wf[size_t(i)] += 0.3f;
  std::vector<uint8_t> w(size_t(quantTensorBytes(c.format, n, c.k, c.group)));
  EXPECT_TRUE(quantizeTensor({c.format, c.group}, DType::F32, wf.data(), n,
                             c.k, w.data())
                  .isOk());
  return w;
}

std::vector<float> dequantised(const Case &c, const std::vector<uint8_t> &w,
                               int64_t n) {
  std::vector<float> out(size_t(n * c.k));
  const int64_t rowBytes = quantRowBytes(c.format, c.k, c.group);
  for (int64_t r = 0; r < n; ++r)
    dequantizeRow(c.format, c.group, w.data() + r * rowBytes, c.k,
                  out.data() + r * c.k);
  return out;
}

/// Every ISA's kernel gives the same bits for every tile shape (1 to 32
/// rows of x) and equals the double sum over the dequantised values.
TEST(LinearQuant, EveryIsaMatchesTheExactSumsBitwiseAlike) {
  for (const Case &c : kCases)
    for (int lanes : {8, 16})
    for (int64_t m : {1, 2, 3, 5, 8, 13, 32}) {
      SCOPED_TRACE(describe(c) + " m=" + std::to_string(m) + " lanes=" +
                   std::to_string(lanes));
      const int64_t n = 23;
      std::vector<uint8_t> w = quantisedWeights(c, n, 11);
      std::vector<float> wf = dequantised(c, w, n);
      std::vector<float> x = test::normalValues(size_t((m + 2) * c.k), 12);
      std::vector<float> bias = test::normalValues(size_t(n), 13);
      std::vector<float> first;
      for (const QuantLinearKernels *ks : supportedSets(lanes)) {
        SCOPED_TRACE(ks->isa);
        std::vector<float> y(size_t(m * n), -1.0f);
        QuantLinearArgs a;
        a.m = m, a.n = n, a.k = c.k, a.row0 = 2, a.x = x.data();
        a.w = w.data(), a.wType = c.format, a.group = c.group;
        a.bias = bias.data(), a.y = y.data();
        ks->nk(a, 0, n);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; j < n; ++j) {
            double want = bias[size_t(j)];
            for (int64_t i = 0; i < c.k; ++i)
              want += double(x[size_t((r + 2) * c.k + i)]) *
                      double(wf[size_t(j * c.k + i)]);
            ASSERT_NEAR(y[size_t(r * n + j)], want, 1e-5 * (1 + std::fabs(want)))
                << "row " << r << " col " << j;
          }
        if (first.empty())
          first = y;
        else
          ASSERT_EQ(0, std::memcmp(first.data(), y.data(),
                                   y.size() * sizeof(float)));
      }
    }
}

Attr wLayoutNk() {
  Attr a;
  a.name = "w_layout", a.kind = Attr::Kind::Str, a.s = "nk";
  return a;
}

/// linear(x, W, bias, residual in place) with W quantised, and with W as
/// the f32 tensor of its dequantised values.
std::pair<test::Tensor, test::Tensor> bothLinears(const Case &c, int64_t m,
                                                  int64_t n, uint32_t seed) {
  std::vector<uint8_t> wq = quantisedWeights(c, n, seed);
  test::Tensor x = test::make(DType::F32, {m, c.k},
                              test::normalValues(size_t(m * c.k), seed + 1));
  test::Tensor bias =
      test::make(DType::F32, {n}, test::normalValues(size_t(n), seed + 2));
  test::Tensor res = test::make(DType::F32, {m, n},
                                test::normalValues(size_t(m * n), seed + 3));
  test::Tensor wQ;
  wQ.dtype = c.format, wQ.shape = {n, c.k}, wQ.data = wq;
  test::Tensor wF = test::make(DType::F32, {n, c.k}, dequantised(c, wq, n));
  test::Call q("linear", {&x, &wQ, &bias, &res}, {wLayoutNk()});
  q.groupSizes = {0, c.group};
  q.aliasInput = 3;
  q.capacity = int64_t(16) << 20;
  test::Call f("linear", {&x, &wF, &bias, &res}, {wLayoutNk()});
  f.aliasInput = 3;
  f.capacity = q.capacity;
  return {test::runOk(q), test::runOk(f)};
}

/// Through the kernel registry the quantised linear equals the f32 linear
/// on the dequantised weight up to f32 rounding (the two sum in different
/// lane orders): decode and prefill row counts, ragged groups, bias and a
/// residual in place.
TEST(LinearQuant, KernelMatchesTheF32LinearOnDequantisedWeights) {
  const Case cases[] = {{DType::Q8, 96, 32},    {DType::Q4, 100, 48},
                        {DType::Q4M, 1024, 128}, {DType::F8E4M3, 96, 96},
                        {DType::Q8, 1024, 1024}};
  for (const Case &c : cases)
    for (int64_t m : {1, 3, 10, 40}) {
      SCOPED_TRACE(describe(c) + " m=" + std::to_string(m));
      auto [yq, yf] = bothLinears(c, m, 150, 7);
      ASSERT_EQ(yq.shape, yf.shape);
      const float *a = test::ptr<float>(yq), *b = test::ptr<float>(yf);
      for (int64_t i = 0; i < m * 150; ++i)
        ASSERT_NEAR(a[i], b[i], 1e-5 * (1 + std::fabs(b[i]))) << i;
    }
}

TEST(LinearQuant, ARowsResultDoesNotDependOnTheBatch) {
  const Case c{DType::Q4, 576, 32};
  auto [many, unused] = bothLinears(c, 40, 70, 5);
  (void)unused;
  auto [one, unused1] = bothLinears(c, 1, 70, 5);
  (void)unused1;
  // Same seeds: row 0 of x is the same in both calls.
  ASSERT_EQ(0, std::memcmp(one.data.data(), many.data.data(), 70 * 4));
}

} // namespace

/// A gather from a quantised table (a GGUF's Q8_0 embedding) decodes each
/// requested row, negative indices included, to exactly the values the
/// stored blocks stand for; an index past the table is an error.
TEST(QuantGather, RowsAreTheDequantisedRowsBitwise) {
  for (const Case &c : {Case{DType::Q8, 96, 32}, Case{DType::Q4M, 100, 32},
                        Case{DType::Q4, 64, 64}}) {
    SCOPED_TRACE(describe(c));
    const int64_t rows = 40;
    std::vector<uint8_t> wq = quantisedWeights(c, rows, 11);
    std::vector<float> all = dequantised(c, wq, rows);
    test::Tensor table;
    table.dtype = c.format, table.shape = {rows, c.k}, table.data = wq;
    const std::vector<int64_t> ids = {3, 0, 39, -1, 17, 3};
    test::Tensor idx = test::make(DType::I64, {2, 3}, ids);
    test::Call g("gather", {&table, &idx}, {});
    g.groupSizes = {c.group, 0};
    test::Tensor out = test::runOk(g);
    ASSERT_EQ(out.shape, (shape::Shape{2, 3, c.k}));
    const float *y = test::ptr<float>(out);
    for (size_t t = 0; t < ids.size(); ++t) {
      const int64_t row = ids[t] < 0 ? ids[t] + rows : ids[t];
      ASSERT_EQ(0, std::memcmp(y + t * c.k, all.data() + row * c.k,
                               size_t(c.k) * sizeof(float)))
          << "token " << t;
    }
    test::Tensor bad = test::make(DType::I64, {1}, std::vector<int64_t>{40});
    test::Call b("gather", {&table, &bad}, {});
    b.groupSizes = {c.group, 0};
    std::vector<test::Tensor> outs;
    Status s = test::runKernel(b, &outs);
    EXPECT_NE(s.message().find("index 40"), std::string::npos) << s.message();
  }
}
