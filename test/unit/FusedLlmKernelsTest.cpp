//===- FusedLlmKernelsTest.cpp - add_rms_norm, add_layer_norm, silu_mul ---===//
//
// The fused kernels against the kernels they replace, bitwise: the compiler
// swaps one for the other, so a fused model must produce exactly the tokens
// of the unfused one. add_rms_norm / add_layer_norm against `add` then
// `rms_norm` / `layer_norm` (axis -1), both outputs; silu_mul's one-input
// form against its two-input form on the split halves. Each also runs with
// its outputs placed over its inputs the way the memory planner does, and
// over a shifted overlap the planner never makes (the kernel must copy).
// Inputs are random and non-zero, row lengths odd or SmolLM2-sized.
// rope_paged_attention is in FusedAttentionTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

using namespace ingot;
using namespace ingot::test;

namespace {

/// Runs `kernel` with operands placed in one arena: input i is copied to
/// float offset inAt[i] (-1: it stays in its own tensor) and output o lives
/// at outAt[o] (-1: its own buffer), so outputs can overlap inputs exactly
/// as a memory plan puts them. Returns the outputs.
Status runPlaced(const std::string &kernel,
                 const std::vector<const Tensor *> &ins,
                 const std::vector<Attr> &attrs,
                 const std::vector<int64_t> &inAt,
                 const std::vector<int64_t> &outAt, std::vector<Tensor> *outs,
                 ThreadPool *pool = &testPool()) {
  int64_t arenaFloats = 1;
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i] && inAt[i] >= 0)
      arenaFloats = std::max(arenaFloats, inAt[i] + count(ins[i]->shape));
  const int64_t cap = int64_t(1) << 18; // floats per output
  for (int64_t at : outAt)
    arenaFloats = std::max(arenaFloats, at + cap);
  std::vector<float> arena(size_t(arenaFloats), 7.5f);
  std::vector<std::vector<float>> own(outAt.size());
  cpu::KernelContext ctx(kernel, "test/" + kernel, &attrs, pool);
  for (size_t i = 0; i < ins.size(); ++i) {
    cpu::KernelInput in;
    if (ins[i]) {
      in = {true, ins[i]->data.data(), ins[i]->dtype, ins[i]->shape,
            "in" + std::to_string(i)};
      if (inAt[i] >= 0) {
        std::memcpy(arena.data() + inAt[i], ins[i]->data.data(),
                    ins[i]->data.size());
        in.data = arena.data() + inAt[i];
      }
    }
    ctx.inputs.push_back(in);
  }
  for (size_t o = 0; o < outAt.size(); ++o) {
    cpu::KernelOutput out;
    if (outAt[o] >= 0) {
      out.data = arena.data() + outAt[o];
    } else {
      own[o].assign(size_t(cap), 7.5f);
      out.data = own[o].data();
    }
    out.capacityBytes = uint64_t(cap) * 4;
    out.maxShape = {cap};
    out.name = "out" + std::to_string(o);
    ctx.outputs.push_back(out);
  }
  if (Status s = cpu::findKernel(kernel)->fn(ctx); !s)
    return s;
  outs->clear();
  for (const cpu::KernelOutput &o : ctx.outputs) {
    const auto *p = static_cast<const float *>(o.data);
    outs->push_back(f32(o.shape, std::vector<float>(p, p + count(o.shape))));
  }
  return Status::ok();
}

void expectBitwise(const Tensor &got, const Tensor &want,
                   const std::string &what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  ASSERT_EQ(got.data.size(), want.data.size()) << what;
  for (size_t i = 0; i < got.data.size() / 4; ++i)
    ASSERT_EQ(std::memcmp(got.data.data() + 4 * i, want.data.data() + 4 * i, 4),
              0)
        << what << ": element " << i << " is " << ptr<float>(got)[i]
        << ", want " << ptr<float>(want)[i];
}

/// Output/input placements a plan may make for (sum, y) over (a, b), plus
/// one it never makes: sum one row past a, where writing a row would clobber
/// the next row of a (the kernel must copy a first).
struct Placement {
  const char *name;
  std::vector<int64_t> inAt, outAt; // in floats; rows of d added below
};

std::vector<Placement> placements(int64_t n, int64_t d) {
  const int64_t gap = n + 64;
  return {{"separate", {-1, -1, -1, -1}, {-1, -1}},
          {"sum over a, y over b", {0, gap, -1, -1}, {0, gap}},
          {"sum over b, y over a", {0, gap, -1, -1}, {gap, 0}},
          {"sum over a only", {0, -1, -1, -1}, {0, -1}},
          {"y over b only", {-1, gap, -1, -1}, {-1, gap}},
          {"sum one row past a", {0, -1, -1, -1}, {d, -1}}};
}

const Shape kNormShapes[] = {{1, 576}, {7, 579}, {2, 3, 33},
                             {5, 1},   {64, 17}, {3, 2048}};

TEST(FusedLlmKernels, AddRmsNormIsAddThenRmsNorm) {
  Rng rng(1101);
  EXPECT_TRUE(cpu::findKernel("add_rms_norm")->inPlace());
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    for (const Shape &s : kNormShapes) {
      const int64_t d = s.back();
      Tensor a = rng.uniform(s, -3, 3), b = rng.uniform(s, -2, 2);
      Weight w = makeWeight(rng, dt, {d});
      const std::vector<Attr> attrs = {floatAttr("epsilon", 1e-5)};
      const Tensor sum = runOk({"add", {&a, &b}});
      const Tensor y = runOk({"rms_norm", {&sum, &w.t}, attrs});
      for (const Placement &p : placements(count(s), d)) {
        SCOPED_TRACE(std::string(dtypeName(dt)) + " " + shape::toString(s) +
                     " " + p.name);
        std::vector<Tensor> outs;
        Status st = runPlaced("add_rms_norm", {&a, &b, &w.t}, attrs, p.inAt,
                              p.outAt, &outs);
        ASSERT_TRUE(st.isOk()) << st.message();
        expectBitwise(outs[0], sum, "sum");
        expectBitwise(outs[1], y, "y");
      }
    }
}

TEST(FusedLlmKernels, AddLayerNormIsAddThenLayerNorm) {
  Rng rng(1102);
  EXPECT_TRUE(cpu::findKernel("add_layer_norm")->inPlace());
  for (bool withBias : {true, false})
    for (const Shape &s : kNormShapes) {
      const int64_t d = s.back();
      // An offset mean, so the two-pass variance matters.
      Tensor a = rng.uniform(s, 2, 5), b = rng.uniform(s, -1, 1);
      Tensor scale = rng.uniform({d}, 0.5, 1.5), bias = rng.uniform({d});
      const Tensor *biasIn = withBias ? &bias : nullptr;
      const Tensor sum = runOk({"add", {&a, &b}});
      const Tensor y =
          runOk({"layer_norm",
                 {&sum, &scale, biasIn},
                 {intAttr("axis", -1), floatAttr("epsilon", 1e-5)}});
      for (const Placement &p : placements(count(s), d)) {
        SCOPED_TRACE(shape::toString(s) + (withBias ? " bias " : " ") + p.name);
        std::vector<Tensor> outs;
        Status st =
            runPlaced("add_layer_norm", {&a, &b, &scale, biasIn},
                      {floatAttr("epsilon", 1e-5)}, p.inAt, p.outAt, &outs);
        ASSERT_TRUE(st.isOk()) << st.message();
        expectBitwise(outs[0], sum, "sum");
        expectBitwise(outs[1], y, "y");
      }
    }
  // A broadcast bias of one value, as layer_norm accepts it.
  Tensor a = rng.uniform({3, 9}), b = rng.uniform({3, 9});
  Tensor scale = rng.uniform({9}), bias = rng.uniform({1});
  const Tensor sum = runOk({"add", {&a, &b}});
  const Tensor y = runOk({"layer_norm", {&sum, &scale, &bias}, {}});
  std::vector<Tensor> outs;
  ASSERT_TRUE(runPlaced("add_layer_norm", {&a, &b, &scale, &bias}, {},
                        {-1, -1, -1, -1}, {-1, -1}, &outs)
                  .isOk());
  expectBitwise(outs[1], y, "y with a [1] bias");
}

TEST(FusedLlmKernels, AddNormErrors) {
  Rng rng(1103);
  Tensor a = rng.uniform({2, 8}), b = rng.uniform({2, 8});
  Tensor b9 = rng.uniform({2, 9}), w = rng.uniform({8}), w9 = rng.uniform({9});
  std::vector<Tensor> outs;
  auto expectError = [&](const std::string &kernel,
                         const std::vector<const Tensor *> &ins, size_t numOut,
                         const std::string &part) {
    std::vector<DType> types(numOut, DType::F32);
    Status s = runKernel({kernel, ins, {}, types}, &outs);
    ASSERT_FALSE(s.isOk()) << kernel;
    EXPECT_NE(s.message().find("(" + kernel + ")"), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  };
  for (const char *k : {"add_rms_norm", "add_layer_norm"}) {
    expectError(k, {&a, &b9, &w}, 2, "must have the same shape");
    expectError(k, {&a, &b, &w}, 1, "expects 2 outputs");
  }
  expectError("add_rms_norm", {&a, &b, &w9}, 2,
              "weight 'in2' must have shape [8]");
  expectError("add_layer_norm", {&a, &b, &w9}, 2,
              "does not broadcast to the normalised dims [8]");
  expectError("add_layer_norm", {&a, &b, &w, &w9}, 2,
              "input 3 'in3' of shape [9]");
}

TEST(FusedLlmKernels, PackedSiluMulIsTwoInputSiluMul) {
  Rng rng(1104);
  // F = 1536 (SmolLM2), F > kBlock with a tail, odd F, many short rows
  // (several in-place waves), leading dims.
  const Shape shapes[] = {{1, 3072},   {7, 2 * 1029}, {2, 2 * 2500},
                          {33, 2 * 7}, {3, 2, 2 * 5}, {300, 2 * 3}};
  for (const Shape &s : shapes) {
    const int64_t f = s.back() / 2, rows = count(s) / (2 * f);
    Tensor x = rng.uniform(s, -12, 12);
    Shape half = s;
    half.back() = f;
    std::vector<float> gv, uv;
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = ptr<float>(x) + r * 2 * f;
      gv.insert(gv.end(), row, row + f);
      uv.insert(uv.end(), row + f, row + 2 * f);
    }
    Tensor g = f32(half, gv), u = f32(half, uv);
    const Tensor want = runOk({"silu_mul", {&g, &u}});
    const std::pair<const char *, std::pair<int64_t, int64_t>> places[] = {
        {"separate", {-1, -1}},
        {"in place", {0, 0}},
        {"output inside the input", {0, 2 * f}},
        {"output before the input", {f, 0}}};
    for (const auto &[name, at] : places)
      for (ThreadPool *pool : {&testPool(), (ThreadPool *)nullptr}) {
        SCOPED_TRACE(shape::toString(s) + " " + name +
                     (pool ? " pool" : " serial"));
        std::vector<Tensor> outs;
        Status st = runPlaced("silu_mul", {&x}, {}, {at.first}, {at.second},
                              &outs, pool);
        ASSERT_TRUE(st.isOk()) << st.message();
        expectBitwise(outs[0], want, "y");
      }
  }
  // Against the formula too, so that both forms cannot be wrong together.
  Tensor x = rng.uniform({2, 6}, -3, 3);
  Tensor y = runOk({"silu_mul", {&x}});
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t i = 0; i < 3; ++i) {
      const double gv = ptr<float>(x)[r * 6 + i],
                   uv = ptr<float>(x)[r * 6 + 3 + i];
      EXPECT_NEAR(ptr<float>(y)[r * 3 + i], gv / (1 + std::exp(-gv)) * uv,
                  1e-6 * (1 + std::fabs(gv * uv)));
    }
  std::vector<Tensor> outs;
  Tensor odd = rng.uniform({2, 7});
  Status s = runKernel({"silu_mul", {&odd}}, &outs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("(silu_mul): the single input 'in0' [2,7] must "
                             "have an even last dim"),
            std::string::npos)
      << s.message();
}

} // namespace
