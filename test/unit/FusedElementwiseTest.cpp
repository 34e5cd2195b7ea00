//===- FusedElementwiseTest.cpp - The fused kernel vs the unfused ones ----===//
//
// Every opcode of fused_elementwise must give the bits its unfused kernel
// gives (the same per-element functions run on the same floats), on shapes
// that span several tiles, broadcast in the middle and at the ends, and
// with the output over an input as an in-place plan places it. Malformed
// programs are rejected with messages that name the kernel.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace ingot;
using namespace ingot::test;

namespace {

Attr floatsAttr(const std::string &n, std::vector<double> v) {
  Attr a;
  a.name = n;
  a.kind = Attr::Kind::Floats;
  a.floats = std::move(v);
  return a;
}

/// A fused_elementwise call with the given program.
Call fusedCall(std::vector<const Tensor *> ins, const std::string &ops,
               std::vector<int64_t> args, std::vector<double> constants = {}) {
  return Call("fused_elementwise", std::move(ins),
              {strAttr("ops", ops), intsAttr("args", std::move(args)),
               floatsAttr("constants", std::move(constants))});
}

/// The result bits must be identical.
void expectSameBits(const Tensor &got, const Tensor &want) {
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_EQ(got.data.size(), want.data.size());
  const float *g = ptr<float>(got), *w = ptr<float>(want);
  for (int64_t i = 0; i < count(got.shape); ++i)
    ASSERT_EQ(std::memcmp(g + i, w + i, 4), 0)
        << "element " << i << ": got " << g[i] << ", want " << w[i];
}

/// The error message of a call that must fail.
std::string errorOf(const Call &c) {
  std::vector<Tensor> outs;
  Status s = runKernel(c, &outs);
  EXPECT_FALSE(s.isOk());
  return s.message();
}

TEST(FusedElementwise, BinaryOpcodesMatchUnfusedKernels) {
  Rng rng(1);
  // 3 x 700 spans several 512-element tiles; the row operand broadcasts.
  Tensor x = rng.uniform({3, 700}, 0.1, 3), y = rng.uniform({700}, -2, 2);
  for (const char *op : {"add", "sub", "mul", "div", "pow"}) {
    SCOPED_TRACE(op);
    Tensor want = runOk(Call(op, {&x, &y}));
    expectSameBits(runOk(fusedCall({&x, &y}, op, {0, 1})), want);
    // Operands swapped, the broadcast one first.
    if (std::string(op) != "pow")
      expectSameBits(runOk(fusedCall({&y, &x}, op, {1, 0})), want);
  }
  for (const char *kind : {"max", "min"}) {
    SCOPED_TRACE(kind);
    Tensor want = runOk(Call("binary_math", {&x, &y}, {strAttr("kind", kind)}));
    expectSameBits(runOk(fusedCall({&x, &y}, kind, {0, 1})), want);
  }
}

TEST(FusedElementwise, PowWithConstantExponentTakesTheKernelsShortcuts) {
  Rng rng(2);
  Tensor x = rng.uniform({1000}, 0.1, 4);
  for (double e : {2.0, 0.5, 3.0, -1.5}) {
    SCOPED_TRACE(e);
    Tensor ev = f32({}, {float(e)});
    Tensor want = runOk(Call("pow", {&x, &ev}));
    expectSameBits(runOk(fusedCall({&x}, "const pow", {0, -1, 0, 1}, {e})),
                   want);
    expectSameBits(runOk(fusedCall({&x, &ev}, "pow", {0, 1})), want);
  }
}

TEST(FusedElementwise, UnaryOpcodesMatchUnfusedKernels) {
  Rng rng(3);
  Tensor x = rng.uniform({5, 301}, -4, 4), pos = rng.uniform({5, 301}, 0.01, 9);
  for (const char *op :
       {"neg", "exp", "erf", "tanh", "sigmoid", "relu", "sqrt"}) {
    SCOPED_TRACE(op);
    const Tensor &in = std::string(op) == "sqrt" ? pos : x;
    expectSameBits(runOk(fusedCall({&in}, op, {0, -1})),
                   runOk(Call(op, {&in})));
  }
  for (const char *kind : {"reciprocal", "log", "abs", "softplus", "mish",
                           "sin", "cos", "floor", "ceil", "round", "sign"}) {
    SCOPED_TRACE(kind);
    const Tensor &in = std::string(kind) == "log" ? pos : x;
    expectSameBits(runOk(fusedCall({&in}, kind, {0, -1})),
                   runOk(Call("unary_math", {&in}, {strAttr("kind", kind)})));
  }
  for (const char *approximate : {"none", "tanh"}) {
    SCOPED_TRACE(std::string("gelu ") + approximate);
    const std::string op =
        std::string(approximate) == "tanh" ? "gelu_tanh" : "gelu";
    expectSameBits(
        runOk(fusedCall({&x}, op, {0, -1})),
        runOk(Call("gelu", {&x}, {strAttr("approximate", approximate)})));
  }
  for (const char *kind : {"leaky_relu", "elu", "hard_sigmoid"}) {
    SCOPED_TRACE(kind);
    Tensor want = runOk(Call("unary_math", {&x},
                             {strAttr("kind", kind), floatAttr("alpha", 0.2),
                              floatAttr("beta", 0.5)}));
    expectSameBits(runOk(fusedCall({&x}, kind, {0, 0}, {0.2, 0.5})), want);
  }
}

TEST(FusedElementwise, GeluChainWithConstantsMatchesTheUnfusedSteps) {
  Rng rng(4);
  Tensor x = rng.uniform({7, 333}, -5, 5);
  Tensor sqrt2 = f32({}, {1.41421354f}), one = f32({}, {1.0f}),
         half = f32({}, {0.5f});
  Tensor d = runOk(Call("div", {&x, &sqrt2}));
  Tensor e = runOk(Call("erf", {&d}));
  Tensor a = runOk(Call("add", {&e, &one}));
  Tensor m = runOk(Call("mul", {&x, &a}));
  Tensor want = runOk(Call("mul", {&m, &half}));
  Tensor got =
      runOk(fusedCall({&x}, "const div erf const add mul const mul",
                      {0, -1, 0, 1, 2, -1, 1, -1, 3, 4, 0, 5, 2, -1, 6, 7},
                      {1.41421354f, 1.0, 0.5}));
  expectSameBits(got, want);
}

TEST(FusedElementwise, ThreeWayBroadcastMatchesTheUnfusedSteps) {
  Rng rng(5);
  // Broadcasts in the middle, at the end and at the front at once.
  Tensor x = rng.uniform({4, 1, 300}), y = rng.uniform({1, 5, 1}),
         z = rng.uniform({300}), w = rng.uniform({4, 5, 300});
  Tensor s = runOk(Call("mul", {&x, &y}));
  Tensor t = runOk(Call("add", {&s, &z}));
  Tensor u = runOk(Call("tanh", {&t}));
  Tensor want = runOk(Call("sub", {&u, &w}));
  // Instruction results are refs 4..7.
  Tensor got = runOk(fusedCall({&x, &y, &z, &w}, "mul add tanh sub",
                               {0, 1, 4, 2, 5, -1, 6, 3}));
  expectSameBits(got, want);
}

TEST(FusedElementwise, LargeOutputsSplitAcrossThreads) {
  Rng rng(7);
  // 200 tiles, rows of 515 so tiles start mid-row; column and row vectors.
  Tensor x = rng.uniform({200, 515}), c = rng.uniform({200, 1}),
         r = rng.uniform({515});
  Tensor s = runOk(Call("sub", {&x, &c}));
  Tensor e = runOk(Call("exp", {&s}));
  Tensor want = runOk(Call("div", {&e, &r}));
  expectSameBits(
      runOk(fusedCall({&x, &c, &r}, "sub exp div", {0, 1, 3, -1, 4, 2})), want);
}

TEST(FusedElementwise, TrailingReductionsMatchTheReduceKernels) {
  Rng rng(8);
  // Rows of 1100 span three tiles; the mean broadcasts as a column.
  for (Shape shape : {Shape{6, 1100}, Shape{3, 4, 37}}) {
    Shape col = shape;
    col.back() = 1;
    Tensor x = rng.uniform(shape, -3, 3), mu = rng.uniform(col);
    Tensor d = runOk(Call("sub", {&x, &mu}));
    Tensor e = runOk(Call("exp", {&d}));
    for (int64_t keep : {1, 0}) {
      for (const char *kind : {"mean", "sum", "max"}) {
        SCOPED_TRACE(std::string(kind) + " keepdims=" + std::to_string(keep));
        std::vector<Attr> attrs = {intsAttr("axes", {-1}),
                                   intAttr("keepdims", keep)};
        if (std::string(kind) != "mean")
          attrs.push_back(strAttr("kind", kind));
        Tensor want = runOk(Call(std::string(kind) == "mean" ? "reduce_mean"
                                                             : "reduce",
                                 {&e}, attrs));
        Call fused = fusedCall({&x, &mu}, "sub exp", {0, 1, 2, -1});
        fused.attrs.push_back(strAttr("reduce", kind));
        fused.attrs.push_back(intAttr("keepdims", keep));
        expectSameBits(runOk(fused), want);
      }
    }
  }
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Call bad = fusedCall({&x}, "neg", {0, -1});
  bad.attrs.push_back(strAttr("reduce", "median"));
  std::string e = errorOf(bad);
  EXPECT_NE(e.find("unknown reduction \"median\""), std::string::npos) << e;
}

TEST(FusedElementwise, OutputOverAnInputIsSafe) {
  Rng rng(6);
  Tensor x = rng.uniform({3, 900}), b = rng.uniform({900});
  Tensor want = runOk(fusedCall({&x, &b}, "mul exp add", {0, 1, 2, -1, 3, 0}));
  Call same = fusedCall({&x, &b}, "mul exp add", {0, 1, 2, -1, 3, 0});
  same.aliasInput = 0; // the dense input shares the output's memory
  expectSameBits(runOk(same), want);
  Call broadcast = fusedCall({&x, &b}, "mul exp add", {0, 1, 2, -1, 3, 0});
  broadcast.aliasInput = 1; // a broadcast input inside the output's memory
  expectSameBits(runOk(broadcast), want);
}

TEST(FusedElementwise, ScalarOnlyValuesAndEmptyOutputs) {
  Tensor s = f32({1}, {2.0f});
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // (2 + 1) * x: the first instruction is computed once, then widened.
  Tensor got =
      runOk(fusedCall({&s, &x}, "const add mul", {0, -1, 0, 2, 3, 1}, {1.0}));
  ASSERT_EQ(got.shape, (Shape{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(ptr<float>(got)[i], 3.0f * float(i + 1));
  Tensor only = runOk(fusedCall({&s}, "exp neg", {0, -1, 1, -1}));
  ASSERT_EQ(only.shape, (Shape{1}));
  EXPECT_FLOAT_EQ(ptr<float>(only)[0], -std::exp(2.0f));
  Tensor empty = f32({0, 4}, {});
  EXPECT_EQ(runOk(fusedCall({&empty}, "neg exp", {0, -1, 1, -1})).shape,
            (Shape{0, 4}));
}

TEST(FusedElementwise, MalformedProgramsAreRejected) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  std::string e = errorOf(fusedCall({&x}, "neg frobnicate", {0, -1, 1, -1}));
  EXPECT_NE(e.find("(fused_elementwise)"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown opcode 'frobnicate' at instruction 1"),
            std::string::npos)
      << e;
  e = errorOf(fusedCall({&x}, "neg add", {0, -1, 1, 2}));
  EXPECT_NE(e.find("instruction 1 ('add') refers to value 2"),
            std::string::npos)
      << e;
  e = errorOf(fusedCall({&x}, "neg", {0, -1, 0, -1}));
  EXPECT_NE(e.find("args has 4 entries; expected 2 per instruction (2)"),
            std::string::npos)
      << e;
  e = errorOf(fusedCall({&x}, "const add", {1, -1, 0, 1}, {1.0}));
  EXPECT_NE(e.find("reads constant 1 of 1"), std::string::npos) << e;
  e = errorOf(fusedCall({&x}, "exp", {0, 0}));
  EXPECT_NE(e.find("second arg must be -1"), std::string::npos) << e;
  e = errorOf(fusedCall({&x}, "", {}));
  EXPECT_NE(e.find("no instructions"), std::string::npos) << e;
  Tensor i = i64({4}, {1, 2, 3, 4});
  e = errorOf(fusedCall({&i}, "neg", {0, -1}));
  EXPECT_NE(e.find("has dtype int64"), std::string::npos) << e;
}

} // namespace

namespace {

TEST(FusedElementwise, FromI32ConvertsAsCastDoes) {
  // int32 values across the range f32 rounds (|v| > 2^24 loses bits), over
  // several tiles, dense, broadcast along the rows and as one value.
  Rng rng(41);
  std::vector<int32_t> big(3 * 700), row(700);
  for (size_t i = 0; i < big.size(); ++i) // spread over +-2^31, signs mixed
    big[i] =
        int32_t((int64_t(i) * 2654435761ll) % 2147483647ll) * (i % 2 ? -1 : 1);
  for (size_t i = 0; i < row.size(); ++i)
    row[i] = int32_t(i) * 40009 - 14000000;
  Tensor q = i32({3, 700}, big), r = i32({700}, row), one = i32({}, {-123457});
  Tensor s = rng.uniform({700}, -2, 2);
  for (const Tensor *in : {&q, &r, &one}) {
    Tensor asF32 = runOk({"cast", {in}, {}, {DType::F32}});
    expectSameBits(runOk(fusedCall({in}, "from_i32", {0, -1})), asF32);
    // As matmul_integer's dequantise: from_i32, then times a scale row.
    Tensor want = runOk(Call("mul", {&asF32, &s}));
    expectSameBits(runOk(fusedCall({in, &s}, "from_i32 mul", {0, -1, 2, 1})),
                   want);
  }
}

TEST(FusedElementwise, IntInputsAreReadOnlyByFromI32) {
  Tensor q = i32({4}, {1, 2, 3, 4}), x = f32({4}, {1, 2, 3, 4});
  EXPECT_NE(errorOf(fusedCall({&q}, "neg", {0, -1}))
                .find("reads an int32 input (only from_i32 may)"),
            std::string::npos);
  EXPECT_NE(errorOf(fusedCall({&x}, "from_i32", {0, -1}))
                .find("must read an int32 input"),
            std::string::npos);
}

} // namespace
