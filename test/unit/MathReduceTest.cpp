//===- MathReduceTest.cpp - reduce and arg_reduce vs naive loops ----------===//
//
// The reductions of docs/kernels-math.md against a double-precision
// reference written as the plainest loop over multi-indices, on shapes
// with non-trailing, negative and run-time axes; max/min over trailing
// axes bitwise against the serial loop.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace ingot;
using namespace ingot::test;

namespace {

/// Naive reduction: for each output multi-index, loop over all inputs.
std::vector<double> naiveReduce(const Tensor &x, std::vector<int64_t> axes,
                                const std::string &kind, Shape *kept) {
  int64_t r = x.shape.size();
  for (int64_t &a : axes)
    a = a < 0 ? a + r : a;
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i)
      axes.push_back(i);
  *kept = x.shape;
  for (int64_t a : axes)
    (*kept)[a] = 1;
  std::vector<std::vector<double>> groups(count(*kept));
  for (int64_t i = 0; i < count(x.shape); ++i) {
    auto idx = unravel(i, x.shape);
    groups[broadcastIndex(idx, *kept)].push_back(ptr<float>(x)[i]);
  }
  std::vector<double> out;
  for (auto &g : groups) {
    double acc = kind == "prod"  ? 1
                 : kind == "max" ? -INFINITY
                 : kind == "min" ? INFINITY
                                 : 0;
    for (double v : g) {
      if (kind == "sum")
        acc += v;
      else if (kind == "prod")
        acc *= v;
      else if (kind == "max")
        acc = std::max(acc, v);
      else if (kind == "min")
        acc = std::min(acc, v);
      else if (kind == "sum_square" || kind == "l2")
        acc += v * v;
      else
        acc += std::exp(v);
    }
    if (kind == "l2")
      acc = std::sqrt(acc);
    if (kind == "log_sum_exp")
      acc = std::log(acc);
    out.push_back(acc);
  }
  return out;
}

TEST(MathReduce, ReduceKindsAndAxes) {
  Rng rng(5);
  Tensor x = rng.uniform({3, 4, 5}, 0.5, 1.5);
  for (std::string kind :
       {"sum", "max", "min", "prod", "l2", "sum_square", "log_sum_exp"})
    for (std::vector<int64_t> axes : std::vector<std::vector<int64_t>>{
             {}, {1}, {-1}, {0, 2}, {0}, {0, 1, 2}})
      for (int64_t keep : {0, 1}) {
        Shape kept;
        std::vector<double> ref = naiveReduce(x, axes, kind, &kept);
        Shape out;
        shape::reduce(x.shape, axes, keep != 0, &out, nullptr);
        Tensor y = runOk(Call("reduce", {&x},
                              {strAttr("kind", kind), intsAttr("axes", axes),
                               intAttr("keepdims", keep)}));
        SCOPED_TRACE(kind + " keep " + std::to_string(keep));
        expectClose(y, out, ref, 1e-6);
      }
  Tensor xi = rng.ints<int64_t>(DType::I64, {2, 3}, -4, 4);
  Tensor s = runOk(Call(
      "reduce", {&xi},
      {strAttr("kind", "sum"), intsAttr("axes", {0}), intAttr("keepdims", 0)},
      {DType::I64}));
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(ptr<int64_t>(s)[j],
              ptr<int64_t>(xi)[j] + ptr<int64_t>(xi)[3 + j]);
}

/// Max and min over trailing axes run a vectorised row loop: it must give
/// the serial loop's bits, which differ from any lane order only at ties
/// of -0 and +0 (the first wins) and for NaN (the row's last one wins).
TEST(MathReduce, RowMaxMinKeepSerialOrder) {
  Rng rng(21);
  const int64_t rows = 7, d = 133; // lanes of 8 and 16 plus a tail
  Tensor x = rng.uniform({rows, d}, -3, 3);
  float *p = ptr<float>(x);
  const float nan1 = std::numeric_limits<float>::quiet_NaN();
  const float nan2 = -std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < d; ++i) { // rows 1, 2: all zeros, -0 first or last
    p[d + i] = i == 5 ? -0.0f : (i < 5 ? -1.0f : 0.0f);
    p[2 * d + i] = i == d - 1 ? -0.0f : (i % 2 ? 0.0f : -2.0f);
  }
  p[3 * d + 17] = nan1, p[3 * d + 90] = nan2; // row 3: two NaNs
  p[4 * d + 131] = std::numeric_limits<float>::infinity();
  for (const char *kind : {"max", "min"}) {
    SCOPED_TRACE(kind);
    const bool isMax = std::string(kind) == "max";
    Tensor y = runOk(Call("reduce", {&x},
                          {strAttr("kind", kind), intsAttr("axes", {1}),
                           intAttr("keepdims", 0)}));
    for (int64_t r = 0; r < rows; ++r) {
      float want = isMax ? -INFINITY : INFINITY;
      for (int64_t i = 0; i < d; ++i) {
        const float v = p[r * d + i];
        if ((isMax ? v > want : v < want) || v != v)
          want = v;
      }
      uint32_t a, b;
      std::memcpy(&a, &ptr<float>(y)[r], 4);
      std::memcpy(&b, &want, 4);
      EXPECT_EQ(a, b) << "row " << r;
    }
  }
}

/// dynamic_quantize_linear's range: both extremes of the whole tensor,
/// found over parallel chunks of 16384 values, four vectors at a time and
/// then a masked tail. Each case puts the minimum and the maximum in a
/// different place (the unrolled body, the tail, another chunk) and checks
/// the scale and zero point against a serial scan; a NaN anywhere makes
/// the scale NaN, as the unfused reduce min/max would.
TEST(MathReduce, DynamicQuantizeRangeOverChunksAndTails) {
  Rng rng(33);
  struct Case {
    int64_t n, minAt, maxAt, nanAt;
  };
  const Case cases[] = {{1, 0, 0, -1},
                        {15, 14, 3, -1},
                        {64, 63, 0, -1},
                        {69, 66, 64, -1},
                        {200, 130, 199, -1},
                        {16384 * 2 + 33, 16390, 32800, -1},
                        {16384 + 7, 3, 16387, 16385},
                        {77, 10, 20, 76}};
  for (const Case &c : cases) {
    SCOPED_TRACE("n=" + std::to_string(c.n));
    Tensor x = rng.uniform({c.n}, -1, 1);
    float *p = ptr<float>(x);
    p[c.minAt] = -4.5f;
    p[c.maxAt] = c.minAt == c.maxAt ? -4.5f : 6.25f;
    if (c.nanAt >= 0)
      p[c.nanAt] = std::numeric_limits<float>::quiet_NaN();
    std::vector<Tensor> outs;
    ASSERT_TRUE(runKernel(Call("dynamic_quantize_linear", {&x}, {},
                               {DType::U8, DType::F32, DType::U8}),
                          &outs)
                    .isOk());
    const float scale = ptr<float>(outs[1])[0];
    if (c.nanAt >= 0) {
      EXPECT_TRUE(std::isnan(scale));
      continue;
    }
    float lo = 0.0f, hi = 0.0f; // the range always includes 0
    for (int64_t i = 0; i < c.n; ++i)
      lo = std::min(lo, p[i]), hi = std::max(hi, p[i]);
    EXPECT_EQ(scale, (hi - lo) / 255.0f);
    EXPECT_EQ(ptr<uint8_t>(outs[2])[0],
              uint8_t(std::nearbyint(-lo / ((hi - lo) / 255.0f))));
  }
}

/// Integer sums and products wrap modulo 2^64 as ONNX's (and numpy's) do,
/// which uint64 values held in int64 rely on; signed overflow would be
/// undefined behaviour (UBSan's finding in make test-asan).
TEST(MathReduce, IntegerReductionsWrap) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor x = i64({4}, {big, big, 3, -5});
  auto reduce = [&](const char *kind) {
    Tensor y = runOk(Call(
        "reduce", {&x},
        {strAttr("kind", kind), intsAttr("axes", {0}), intAttr("keepdims", 0)},
        {DType::I64}));
    return ptr<int64_t>(y)[0];
  };
  uint64_t sum = 0, prod = 1;
  for (int64_t v : {big, big, int64_t(3), int64_t(-5)}) {
    sum += uint64_t(v);
    prod *= uint64_t(v);
  }
  EXPECT_EQ(reduce("sum"), int64_t(sum));
  EXPECT_EQ(reduce("prod"), int64_t(prod));
  Tensor c = runOk(
      Call("cumsum", {&x},
           {intAttr("axis", 0), intAttr("exclusive", 0), intAttr("reverse", 0)},
           {DType::I64}));
  EXPECT_EQ(ptr<int64_t>(c)[1], int64_t(uint64_t(big) * 2));
  EXPECT_EQ(ptr<int64_t>(c)[3], int64_t(sum));
}

TEST(MathReduce, ReduceAxesFromInput) {
  Rng rng(9);
  Tensor x = rng.uniform({2, 3, 4});
  Tensor axes = i64({1}, {-2});
  Shape kept;
  std::vector<double> ref = naiveReduce(x, {1}, "sum", &kept);
  Tensor y = runOk(Call(
      "reduce", {&x, &axes},
      {strAttr("kind", "sum"), intsAttr("axes", {}), intAttr("keepdims", 0)}));
  expectClose(y, {2, 4}, ref, 1e-6);
  // An empty axes input: every axis, or an identity with noop_with_empty_axes.
  Tensor none = i64({0}, {});
  Tensor all = runOk(Call(
      "reduce", {&x, &none},
      {strAttr("kind", "max"), intsAttr("axes", {}), intAttr("keepdims", 0)}));
  expectClose(all, {}, naiveReduce(x, {}, "max", &kept), 0);
  Tensor same =
      runOk(Call("reduce", {&x, &none},
                 {strAttr("kind", "max"), intsAttr("axes", {}),
                  intAttr("keepdims", 1), intAttr("noop_with_empty_axes", 1)}));
  expectClose(same, x.shape, toDouble(x), 0);
}

TEST(MathReduce, ReduceBoolIsAnyAll) {
  Tensor b = make<uint8_t>(DType::Bool, {2, 3}, {0, 1, 0, 1, 1, 1});
  auto run = [&](const char *kind) {
    return runOk(Call(
        "reduce", {&b},
        {strAttr("kind", kind), intsAttr("axes", {1}), intAttr("keepdims", 0)},
        {DType::Bool}));
  };
  Tensor any = run("max"), all = run("min");
  EXPECT_EQ(ptr<uint8_t>(any)[0], 1);
  EXPECT_EQ(ptr<uint8_t>(any)[1], 1);
  EXPECT_EQ(ptr<uint8_t>(all)[0], 0);
  EXPECT_EQ(ptr<uint8_t>(all)[1], 1);
}

TEST(MathReduce, ArgReduceFirstAndLastIndex) {
  Tensor x = f32({2, 4}, {1, 3, 3, 0, 2, 2, -1, 2});
  auto run = [&](const std::string &kind, int64_t last) {
    return runOk(
        Call("arg_reduce", {&x},
             {strAttr("kind", kind), intAttr("axis", -1),
              intAttr("keepdims", 0), intAttr("select_last_index", last)},
             {DType::I64}));
  };
  Tensor a = run("max", 0), b = run("max", 1), c = run("min", 0);
  EXPECT_EQ(a.shape, Shape({2}));
  EXPECT_EQ(ptr<int64_t>(a)[0], 1);
  EXPECT_EQ(ptr<int64_t>(a)[1], 0);
  EXPECT_EQ(ptr<int64_t>(b)[0], 2);
  EXPECT_EQ(ptr<int64_t>(b)[1], 3);
  EXPECT_EQ(ptr<int64_t>(c)[0], 3);
  EXPECT_EQ(ptr<int64_t>(c)[1], 2);
  Rng rng(6);
  Tensor y = rng.uniform({3, 5, 2});
  Tensor r =
      runOk(Call("arg_reduce", {&y},
                 {strAttr("kind", "max"), intAttr("axis", 1),
                  intAttr("keepdims", 1), intAttr("select_last_index", 0)},
                 {DType::I64}));
  EXPECT_EQ(r.shape, Shape({3, 1, 2}));
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 2; ++i) {
      int best = 0;
      for (int k = 1; k < 5; ++k)
        if (ptr<float>(y)[o * 10 + k * 2 + i] >
            ptr<float>(y)[o * 10 + best * 2 + i])
          best = k;
      EXPECT_EQ(ptr<int64_t>(r)[o * 2 + i], best);
    }
}

} // namespace
