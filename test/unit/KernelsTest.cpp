//===- KernelsTest.cpp - Elementwise kernels, errors, the registry --------===//
//
// Every elementwise kernel against a naive loop in double precision on
// fresh random inputs (fixed non-zero seeds). Shapes cover broadcasting,
// sizes that are not multiples of any vector width, and sizes large enough
// to run on several threads. softmax, layer_norm and reduce_mean are in
// KernelsNormTest.cpp, data movement and conversion kernels in
// KernelsDataTest.cpp, matmul/gemm in GemmTest.cpp.
//
// Tolerances: one f32 rounding of an exact result is <= 6e-8 relative;
// libm's expf/erff/tanhf are within ~1-2 ulp, so 3e-7 (5 ulp) leaves margin
// without hiding a wrong formula (those are off by >1e-3).
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <functional>
#include <limits>

using namespace ingot;
using namespace ingot::test;

namespace {

const std::vector<std::pair<Shape, Shape>> kBroadcastCases = {
    {{3, 4}, {3, 4}},
    {{2, 3, 4}, {4}},
    {{2, 1, 4}, {3, 1}},
    {{}, {5}},
    {{5}, {}},
    {{4, 1, 6}, {1, 5, 1}},
    {{257, 129}, {257, 1}},
    {{1000, 70}, {70}},
    {{3, 1000, 33}, {3, 1, 33}},
    {{1, 7}, {9, 1}},
    {{0, 4}, {1, 4}},
};

double binaryRef(const std::string &op, double a, double b) {
  if (op == "add")
    return a + b;
  if (op == "sub")
    return a - b;
  if (op == "mul")
    return a * b;
  return a / b;
}

TEST(Kernels, ArithmeticF32Broadcast) {
  Rng rng(101);
  for (const std::string op : {"add", "sub", "mul", "div"})
    for (const auto &[sa, sb] : kBroadcastCases) {
      Tensor a = rng.uniform(sa);
      // Divisors away from zero keep the relative error meaningful.
      Tensor b = op == "div" ? rng.uniform(sb, 0.5, 2.0) : rng.uniform(sb);
      Shape so = broadcastShape(sa, sb);
      std::vector<double> ref(count(so));
      for (int64_t i = 0; i < count(so); ++i) {
        auto idx = unravel(i, so);
        ref[i] = binaryRef(op, ptr<float>(a)[broadcastIndex(idx, sa)],
                           ptr<float>(b)[broadcastIndex(idx, sb)]);
      }
      Tensor out = runOk({op, {&a, &b}});
      SCOPED_TRACE(op + " " + shape::toString(sa) + " " + shape::toString(sb));
      expectClose(out, so, ref, 1e-7);
    }
}

template <typename T> void checkIntArithmetic(DType dt, uint64_t seed) {
  Rng rng(seed);
  for (const std::string op : {"add", "sub", "mul", "div"})
    for (const auto &[sa, sb] : kBroadcastCases) {
      Tensor a = rng.ints<T>(dt, sa, -1000, 1000);
      Tensor b = rng.ints<T>(dt, sb, 1, 50);
      for (int64_t i = 0; i < count(sb); i += 2)
        ptr<T>(b)[i] = -ptr<T>(b)[i]; // negative divisors too
      Shape so = broadcastShape(sa, sb);
      Tensor out = runOk({op, {&a, &b}, {}, {dt}});
      ASSERT_EQ(out.shape, so);
      for (int64_t i = 0; i < count(so); ++i) {
        auto idx = unravel(i, so);
        T x = ptr<T>(a)[broadcastIndex(idx, sa)];
        T y = ptr<T>(b)[broadcastIndex(idx, sb)];
        // C++ integer division truncates toward zero, as onnxruntime does.
        T want = op == "add"   ? T(x + y)
                 : op == "sub" ? T(x - y)
                 : op == "mul" ? T(x * y)
                               : T(x / y);
        ASSERT_EQ(ptr<T>(out)[i], want) << op << " at " << i;
      }
    }
}

TEST(Kernels, ArithmeticIntegers) {
  checkIntArithmetic<int64_t>(DType::I64, 102);
  checkIntArithmetic<int32_t>(DType::I32, 103);
  Tensor a = i64({3}, {-7, 7, -7}), b = i64({3}, {2, -2, 0});
  Tensor out = runOk({"div", {&a, &b}, {}, {DType::I64}});
  EXPECT_EQ(ptr<int64_t>(out)[0], -3); // toward zero, not floor
  EXPECT_EQ(ptr<int64_t>(out)[1], -3);
  EXPECT_EQ(ptr<int64_t>(out)[2], 0) << "x/0 is defined as 0, no trap";
}

TEST(Kernels, Pow) {
  Rng rng(104);
  Tensor base = rng.uniform({37, 41}, 0.1, 3.0);
  Tensor expF = rng.uniform({41}, -2.0, 2.0);
  Tensor expI64 = rng.ints<int64_t>(DType::I64, {37, 1}, -3, 3);
  Tensor expI32 = rng.ints<int32_t>(DType::I32, {}, 3, 3);
  Tensor two = f32({}, {2.0f}), half = f32({1}, {0.5f});
  for (const Tensor *e : {&expF, &expI64, &expI32, &two, &half}) {
    Shape so = broadcastShape(base.shape, e->shape);
    std::vector<double> ref(count(so));
    for (int64_t i = 0; i < count(so); ++i) {
      auto idx = unravel(i, so);
      int64_t j = broadcastIndex(idx, e->shape);
      double ev = e->dtype == DType::F32   ? ptr<float>(*e)[j]
                  : e->dtype == DType::I64 ? double(ptr<int64_t>(*e)[j])
                                           : double(ptr<int32_t>(*e)[j]);
      ref[i] = std::pow(
          double(ptr<float>(base)[broadcastIndex(idx, base.shape)]), ev);
    }
    Tensor out = runOk({"pow", {&base, e}});
    SCOPED_TRACE(dtypeName(e->dtype) + std::string(" ") +
                 shape::toString(e->shape));
    expectClose(out, so, ref, 3e-7);
  }
}

TEST(Kernels, ElementwiseInPlace) {
  Rng rng(105);
  // Same shape: output is a's memory.
  Tensor a = rng.uniform({300, 301}), b = rng.uniform({300, 301});
  std::vector<double> ref(count(a.shape));
  for (size_t i = 0; i < ref.size(); ++i)
    ref[i] = double(ptr<float>(a)[i]) * ptr<float>(b)[i];
  Call c{"mul", {&a, &b}};
  c.aliasInput = 0;
  expectClose(runOk(c), a.shape, ref, 1e-7);
  // A broadcast operand living at the start of the output's memory must be
  // copied before the output overwrites it.
  Tensor x = rng.uniform({64, 129}), bias = rng.uniform({129});
  for (int alias : {0, 1}) {
    Call cb{"sub", {&x, &bias}};
    cb.aliasInput = alias;
    std::vector<double> r(count(x.shape));
    for (size_t i = 0; i < r.size(); ++i)
      r[i] = double(ptr<float>(x)[i]) - ptr<float>(bias)[i % 129];
    expectClose(runOk(cb), x.shape, r, 1e-7);
  }
  Tensor bigBias = rng.uniform({200, 1});
  Tensor row = rng.uniform({1, 300});
  Call cr{"add", {&bigBias, &row}};
  cr.aliasInput = 0;
  std::vector<double> r2(200 * 300);
  for (int64_t i = 0; i < 200; ++i)
    for (int64_t j = 0; j < 300; ++j)
      r2[i * 300 + j] = double(ptr<float>(bigBias)[i]) + ptr<float>(row)[j];
  expectClose(runOk(cr), {200, 300}, r2, 1e-7);
}

struct UnaryCase {
  const char *name;
  std::function<double(double)> ref;
  double lo, hi, rtol, atol;
};

TEST(Kernels, UnaryF32) {
  const std::vector<UnaryCase> cases = {
      {"sqrt", [](double x) { return std::sqrt(x); }, 0.0, 100.0, 1e-7, 0},
      {"neg", [](double x) { return -x; }, -5, 5, 0, 0},
      {"exp", [](double x) { return std::exp(x); }, -20, 20, 3e-7, 0},
      {"erf", [](double x) { return std::erf(x); }, -4, 4, 3e-7, 1e-30},
      {"tanh", [](double x) { return std::tanh(x); }, -10, 10, 3e-7, 1e-30},
      {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -30, 30,
       5e-7, 0},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }, -5, 5, 0, 0},
  };
  Rng rng(106);
  for (const UnaryCase &uc : cases)
    for (Shape s : {Shape{}, Shape{7}, Shape{3, 5, 11}, Shape{129, 1031}}) {
      Tensor x = rng.uniform(s, uc.lo, uc.hi);
      std::vector<double> ref(count(s));
      for (size_t i = 0; i < ref.size(); ++i)
        ref[i] = uc.ref(ptr<float>(x)[i]);
      SCOPED_TRACE(std::string(uc.name) + " " + shape::toString(s));
      expectClose(runOk({uc.name, {&x}}), s, ref, uc.rtol, uc.atol);
      Call inPlace{uc.name, {&x}};
      inPlace.aliasInput = 0;
      expectClose(runOk(inPlace), s, ref, uc.rtol, uc.atol);
    }
}

TEST(Kernels, UnaryIntegers) {
  Tensor x = i64({5}, {-3, 0, 4, INT64_MIN + 1, 9});
  Tensor n = runOk({"neg", {&x}, {}, {DType::I64}});
  Tensor r = runOk({"relu", {&x}, {}, {DType::I64}});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(ptr<int64_t>(n)[i], -ptr<int64_t>(x)[i]);
    EXPECT_EQ(ptr<int64_t>(r)[i], std::max<int64_t>(0, ptr<int64_t>(x)[i]));
  }
  Tensor y = i32({3}, {-1, 2, 0});
  Tensor ry = runOk({"relu", {&y}, {}, {DType::I32}});
  EXPECT_EQ(ptr<int32_t>(ry)[0], 0);
  EXPECT_EQ(ptr<int32_t>(ry)[1], 2);
  std::vector<Tensor> outs;
  EXPECT_FALSE(runKernel({"exp", {&x}, {}, {DType::I64}}, &outs).isOk());
}

template <typename T>
void checkWhere(Rng &rng, DType dt, const Shape &sc, const Shape &sx,
                const Shape &sy, int alias) {
  Tensor c = rng.bools(sc);
  Tensor x = rng.ints<T>(dt, sx, 0, 100), y = rng.ints<T>(dt, sy, 0, 100);
  Shape so = broadcastShape(broadcastShape(sc, sx), sy);
  Call call{"where", {&c, &x, &y}, {}, {dt}};
  call.aliasInput = alias;
  Tensor out = runOk(call);
  ASSERT_EQ(out.shape, so);
  for (int64_t i = 0; i < count(so); ++i) {
    auto idx = unravel(i, so);
    T want = ptr<uint8_t>(c)[broadcastIndex(idx, sc)]
                 ? ptr<T>(x)[broadcastIndex(idx, sx)]
                 : ptr<T>(y)[broadcastIndex(idx, sy)];
    ASSERT_EQ(ptr<T>(out)[i], want) << "at " << i;
  }
}

TEST(Kernels, Where) {
  Rng rng(107);
  const std::vector<std::array<Shape, 3>> shapes = {
      {Shape{4, 5}, Shape{4, 5}, Shape{4, 5}},
      {Shape{1, 5}, Shape{4, 1}, Shape{}},
      {Shape{2, 1, 300}, Shape{2, 80, 300}, Shape{300}},
      {Shape{}, Shape{3}, Shape{2, 3}}};
  for (const auto &s : shapes) {
    checkWhere<int64_t>(rng, DType::I64, s[0], s[1], s[2], -1);
    checkWhere<uint16_t>(rng, DType::F16, s[0], s[1], s[2], -1);
    checkWhere<uint8_t>(rng, DType::U8, s[0], s[1], s[2], -1);
    checkWhere<int32_t>(rng, DType::I32, s[0], s[1], s[2], 1);
    checkWhere<int32_t>(rng, DType::I32, s[0], s[1], s[2], 2);
  }
  Tensor c = rng.bools({6}), x = rng.uniform({6}), y = rng.uniform({6});
  Tensor out = runOk({"where", {&c, &x, &y}});
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(ptr<float>(out)[i],
              ptr<uint8_t>(c)[i] ? ptr<float>(x)[i] : ptr<float>(y)[i]);
}

TEST(Kernels, ErrorsNameTheStep) {
  Rng rng(111);
  Tensor a = rng.uniform({3, 4}), b = rng.uniform({5});
  std::vector<Tensor> outs;
  Status s = runKernel({"add", {&a, &b}}, &outs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("node 'test/add' (add)"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("[3,4]"), std::string::npos) << s.message();

  // Output larger than the compiled bound.
  Tensor big = rng.uniform({10, 10});
  Call c{"relu", {&big}};
  c.capacity = 64;
  s = runKernel(c, &outs);
  ASSERT_FALSE(s.isOk());
  for (const char *part :
       {"test/relu", "out0", "[10,10]", "400 bytes", "--max-dim"})
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();

  // Dtype, attribute and arity problems.
  Tensor ints = i64({2}, {1, 2});
  s = runKernel({"softmax", {&ints}, {}, {DType::I64}}, &outs);
  EXPECT_NE(s.message().find("int64"), std::string::npos) << s.message();
  s = runKernel({"softmax", {&a}, {floatAttr("axis", 1.0)}}, &outs);
  EXPECT_NE(s.message().find("attribute 'axis' is Float, expected Int"),
            std::string::npos)
      << s.message();
  s = runKernel({"concat", {&a, &a}}, &outs);
  EXPECT_NE(s.message().find("missing attribute 'axis'"), std::string::npos)
      << s.message();
  s = runKernel({"softmax", {&a, &a}}, &outs);
  EXPECT_FALSE(s.isOk());
  s = runKernel({"softmax", {&a}, {intAttr("axis", 2)}}, &outs);
  EXPECT_NE(s.message().find("axis 2"), std::string::npos) << s.message();
}

TEST(Kernels, RegistryHasTheDocumentedKernels) {
  for (const char *name : {"add",       "sub",        "mul",
                           "div",       "pow",        "sqrt",
                           "neg",       "exp",        "erf",
                           "tanh",      "sigmoid",    "relu",
                           "where",     "matmul",     "gemm",
                           "softmax",   "layer_norm", "reduce_mean",
                           "transpose", "reshape",    "squeeze",
                           "unsqueeze", "concat",     "gather",
                           "cast",      "shape",      "constant_of_shape",
                           "trilu"})
    EXPECT_NE(cpu::findKernel(name), nullptr) << name;
  EXPECT_EQ(cpu::findKernel("no_such_kernel"), nullptr);
  EXPECT_TRUE(cpu::findKernel("add")->inPlace());
  EXPECT_FALSE(cpu::findKernel("matmul")->inPlace());
}

} // namespace
