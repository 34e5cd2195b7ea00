//===- MathKernelsTest.cpp - The math coverage kernels vs naive loops -----===//
//
// Each kernel of docs/kernels-math.md against a double-precision reference
// written as the plainest loop over multi-indices, on shapes with
// broadcasting, non-trailing and negative axes.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <functional>

using namespace ingot;
using namespace ingot::test;

namespace {

double softplus(double x) { return std::log1p(std::exp(x)); }

TEST(MathKernels, UnaryFloatKinds) {
  Rng rng(1);
  Tensor x = rng.uniform({3, 7, 5}, -4, 4);
  std::vector<std::pair<std::string, std::function<double(double)>>> kinds = {
      {"reciprocal", [](double v) { return 1 / v; }},
      {"abs", [](double v) { return std::fabs(v); }},
      {"softplus", softplus},
      {"mish", [](double v) { return v * std::tanh(softplus(v)); }},
      {"sin", [](double v) { return std::sin(v); }},
      {"cos", [](double v) { return std::cos(v); }},
      {"floor", [](double v) { return std::floor(v); }},
      {"ceil", [](double v) { return std::ceil(v); }},
      {"sign", [](double v) { return double((v > 0) - (v < 0)); }}};
  for (auto &[kind, fn] : kinds) {
    Tensor y = runOk(Call("unary_math", {&x}, {strAttr("kind", kind)}));
    std::vector<double> ref;
    for (double v : toDouble(x))
      ref.push_back(fn(v));
    SCOPED_TRACE(kind);
    expectClose(y, x.shape, ref, 1e-6, 1e-7);
  }
  Tensor pos = rng.uniform({40}, 0.01, 9);
  Tensor y = runOk(Call("unary_math", {&pos}, {strAttr("kind", "log")}));
  std::vector<double> ref;
  for (double v : toDouble(pos))
    ref.push_back(std::log(v));
  expectClose(y, pos.shape, ref, 1e-6, 1e-7);
}

TEST(MathKernels, UnaryParameterisedKinds) {
  Rng rng(2);
  Tensor x = rng.uniform({4, 9}, -3, 3);
  auto run = [&](const std::string &kind, std::vector<Attr> extra,
                 std::function<double(double)> fn) {
    extra.push_back(strAttr("kind", kind));
    Tensor y = runOk(Call("unary_math", {&x}, extra));
    std::vector<double> ref;
    for (double v : toDouble(x))
      ref.push_back(fn(v));
    SCOPED_TRACE(kind);
    expectClose(y, x.shape, ref, 1e-6, 1e-7);
  };
  run("hard_sigmoid", {floatAttr("alpha", 0.2), floatAttr("beta", 0.5)},
      [](double v) { return std::max(0.0, std::min(1.0, 0.2 * v + 0.5)); });
  run("leaky_relu", {floatAttr("alpha", 0.1)},
      [](double v) { return v < 0 ? 0.1 * v : v; });
  run("elu", {floatAttr("alpha", 1.5)},
      [](double v) { return v < 0 ? 1.5 * (std::exp(v) - 1) : v; });
}

TEST(MathKernels, RoundHalfToEvenAndIntKinds) {
  Tensor x = f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f});
  Tensor y = runOk(Call("unary_math", {&x}, {strAttr("kind", "round")}));
  expectClose(y, {6}, {0, 2, 2, 0, -2, 2}, 0, 0);
  Tensor xi = i64({4}, {-3, 0, 5, INT64_MIN + 1});
  Tensor a = runOk(Call("unary_math", {&xi}, {strAttr("kind", "abs")}, {DType::I64}));
  EXPECT_EQ(ptr<int64_t>(a)[0], 3);
  EXPECT_EQ(ptr<int64_t>(a)[3], INT64_MAX);
  Tensor s = runOk(Call("unary_math", {&xi}, {strAttr("kind", "sign")}, {DType::I64}));
  EXPECT_EQ(ptr<int64_t>(s)[0], -1);
  EXPECT_EQ(ptr<int64_t>(s)[1], 0);
  EXPECT_EQ(ptr<int64_t>(s)[2], 1);
  Tensor b = make<uint8_t>(DType::Bool, {3}, {0, 1, 0});
  Tensor n = runOk(Call("unary_math", {&b}, {strAttr("kind", "not")}, {DType::Bool}));
  EXPECT_EQ(ptr<uint8_t>(n)[0], 1);
  EXPECT_EQ(ptr<uint8_t>(n)[1], 0);
}

/// Binary kernels over a broadcast pair vs naive index arithmetic.
template <typename T, typename R>
void checkBinary(const std::string &kernel, const std::string &kind,
                 const Tensor &a, const Tensor &b, DType outType,
                 std::function<R(T, T)> fn) {
  Tensor y = runOk(Call(kernel, {&a, &b}, {strAttr("kind", kind)}, {outType}));
  Shape out = broadcastShape(a.shape, b.shape);
  ASSERT_EQ(y.shape, out);
  for (int64_t i = 0; i < count(out); ++i) {
    auto idx = unravel(i, out);
    R want = fn(ptr<T>(a)[broadcastIndex(idx, a.shape)],
                ptr<T>(b)[broadcastIndex(idx, b.shape)]);
    ASSERT_EQ(ptr<R>(y)[i], want) << kernel << " " << kind << " at " << i;
  }
}

TEST(MathKernels, BinaryMathBroadcast) {
  Rng rng(3);
  Tensor a = rng.uniform({2, 1, 5}), b = rng.uniform({3, 1});
  checkBinary<float, float>("binary_math", "max", a, b, DType::F32,
                            [](float x, float y) { return std::max(x, y); });
  checkBinary<float, float>("binary_math", "min", a, b, DType::F32,
                            [](float x, float y) { return std::min(x, y); });
  Tensor ia = rng.ints<int32_t>(DType::I32, {4, 3}, -5, 5);
  Tensor ib = rng.ints<int32_t>(DType::I32, {3}, -5, 5);
  checkBinary<int32_t, int32_t>("binary_math", "max", ia, ib, DType::I32,
                                [](int32_t x, int32_t y) { return std::max(x, y); });
  Tensor ba = rng.bools({2, 3, 4}), bb = rng.bools({4});
  checkBinary<uint8_t, uint8_t>("binary_math", "and", ba, bb, DType::Bool,
                                [](uint8_t x, uint8_t y) { return uint8_t(x && y); });
  checkBinary<uint8_t, uint8_t>("binary_math", "or", ba, bb, DType::Bool,
                                [](uint8_t x, uint8_t y) { return uint8_t(x || y); });
}

TEST(MathKernels, CompareBroadcast) {
  Rng rng(4);
  Tensor a = rng.ints<int64_t>(DType::I64, {3, 1, 4}, -2, 2);
  Tensor b = rng.ints<int64_t>(DType::I64, {5, 1}, -2, 2);
  using F = std::function<uint8_t(int64_t, int64_t)>;
  std::vector<std::pair<std::string, F>> kinds = {
      {"equal", [](int64_t x, int64_t y) { return uint8_t(x == y); }},
      {"less", [](int64_t x, int64_t y) { return uint8_t(x < y); }},
      {"less_equal", [](int64_t x, int64_t y) { return uint8_t(x <= y); }},
      {"greater", [](int64_t x, int64_t y) { return uint8_t(x > y); }},
      {"greater_equal", [](int64_t x, int64_t y) { return uint8_t(x >= y); }}};
  for (auto &[kind, fn] : kinds)
    checkBinary<int64_t, uint8_t>("compare", kind, a, b, DType::Bool, fn);
  Tensor fa = rng.uniform({6}), fb = rng.uniform({1});
  checkBinary<float, uint8_t>("compare", "less", fa, fb, DType::Bool,
                              [](float x, float y) { return uint8_t(x < y); });
  // Every stride pattern of a run (each has a loop of its own): a scalar
  // on the left, and Magika's one-hot, [n, k, 1] against [1, 1, classes].
  checkBinary<float, uint8_t>("compare", "less", fb, fa, DType::Bool,
                              [](float x, float y) { return uint8_t(x < y); });
  Tensor ids = rng.ints<int32_t>(DType::I32, {2, 5, 1}, 0, 6);
  Tensor classes = make<int32_t>(DType::I32, {1, 1, 7}, {0, 1, 2, 3, 4, 5, 6});
  checkBinary<int32_t, uint8_t>(
      "compare", "equal", ids, classes, DType::Bool,
      [](int32_t x, int32_t y) { return uint8_t(x == y); });
  checkBinary<int32_t, uint8_t>(
      "compare", "equal", classes, ids, DType::Bool,
      [](int32_t x, int32_t y) { return uint8_t(x == y); });
}

TEST(MathKernels, LogSoftmaxMiddleAxis) {
  Rng rng(7);
  Tensor x = rng.uniform({2, 6, 3}, -30, 30);
  Tensor y = runOk(Call("log_softmax", {&x}, {intAttr("axis", -2)}));
  std::vector<double> ref(count(x.shape));
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i) {
      double sum = 0;
      for (int k = 0; k < 6; ++k)
        sum += std::exp(double(ptr<float>(x)[o * 18 + k * 3 + i]));
      for (int k = 0; k < 6; ++k)
        ref[o * 18 + k * 3 + i] = ptr<float>(x)[o * 18 + k * 3 + i] - std::log(sum);
    }
  expectClose(y, x.shape, ref, 1e-6, 1e-5);
}

TEST(MathKernels, CumSumExclusiveReverse) {
  Rng rng(8);
  Tensor x = rng.uniform({3, 4});
  for (int64_t ex : {0, 1})
    for (int64_t rev : {0, 1}) {
      Tensor y = runOk(Call("cumsum", {&x},
                            {intAttr("axis", 1), intAttr("exclusive", ex),
                             intAttr("reverse", rev)}));
      std::vector<double> ref(12);
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 4; ++j) {
          double s = 0;
          for (int k = 0; k < 4; ++k) {
            bool in = rev ? (ex ? k > j : k >= j) : (ex ? k < j : k <= j);
            if (in)
              s += ptr<float>(x)[r * 4 + k];
          }
          ref[r * 4 + j] = s;
        }
      SCOPED_TRACE("exclusive " + std::to_string(ex) + " reverse " +
                   std::to_string(rev));
      expectClose(y, x.shape, ref, 1e-6, 1e-6);
    }
  // The axis as a run-time input (i32 scalar), negative.
  Tensor axis = i32({}, {-1});
  Tensor y = runOk(Call("cumsum", {&x, &axis},
                        {intAttr("exclusive", 0), intAttr("reverse", 0)}));
  std::vector<double> ref(12);
  for (int r = 0; r < 3; ++r) {
    double s = 0;
    for (int j = 0; j < 4; ++j)
      ref[r * 4 + j] = s += ptr<float>(x)[r * 4 + j];
  }
  expectClose(y, x.shape, ref, 1e-6, 1e-6);
  Tensor xi = i32({4}, {1, 2, 3, 4});
  Tensor yi = runOk(Call("cumsum", {&xi},
                         {intAttr("axis", 0), intAttr("exclusive", 0),
                          intAttr("reverse", 0)},
                         {DType::I32}));
  EXPECT_EQ(ptr<int32_t>(yi)[3], 10);
}

TEST(MathKernels, UnknownKindIsAnError) {
  Tensor x = f32({2}, {1, 2});
  std::vector<Tensor> outs;
  Status s = runKernel(Call("unary_math", {&x}, {strAttr("kind", "tan")}), &outs);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("unknown kind"), std::string::npos);
}

} // namespace
