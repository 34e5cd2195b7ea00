//===- LinearEpilogueTest.cpp - linear's fused act + residual -------------===//
//
// linear with `activation` and a residual must give bitwise what the
// separate kernels give (linear, then relu / gelu / silu_mul with up = 1 /
// hard_swish's add, max, min, mul and div, then add), for every weight layout,
// with and without bias, with the residual in its own memory or in y's (the
// planner may place them together), for decode and prefill row counts.
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include "ingot/WeightLayout.h"

using namespace ingot;
using namespace ingot::test;

namespace {

enum class Res { None, Own, Aliased };

struct Case {
  int64_t m, n, k;
  DType dt;
  std::string layout, act;
  bool bias;
  Res res;
};

std::string label(const Case &c) {
  return std::string(dtypeName(c.dt)) + " " + c.layout + " " + c.act +
         " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " k=" + std::to_string(c.k) + (c.bias ? " bias" : "") +
         (c.res == Res::Own       ? " residual"
          : c.res == Res::Aliased ? " residual=y"
                                  : "");
}

/// The activation alone, by its own kernel.
Tensor activate(const std::string &act, const Tensor &y) {
  if (act == "none")
    return y;
  if (act == "relu")
    return runOk(Call("relu", {&y}));
  if (act == "gelu" || act == "gelu_tanh")
    return runOk(
        Call("gelu", {&y},
             {strAttr("approximate", act == "gelu_tanh" ? "tanh" : "none")}));
  if (act == "hard_swish") {
    // As PaddleOCR's graphs spell it: y · min(max(y + 3, 0), 6) / 6.
    auto scalar = [&](float v) {
      Tensor t = y;
      t.shape = {1};
      t.data.assign(sizeof(float), 0);
      ptr<float>(t)[0] = v;
      return t;
    };
    const Tensor three = scalar(3), zero = scalar(0), six = scalar(6);
    const Tensor p = runOk(Call("add", {&y, &three}));
    const Tensor lo =
        runOk(Call("binary_math", {&p, &zero}, {strAttr("kind", "max")}));
    const Tensor hi =
        runOk(Call("binary_math", {&lo, &six}, {strAttr("kind", "min")}));
    const Tensor m = runOk(Call("mul", {&y, &hi}));
    return runOk(Call("div", {&m, &six}));
  }
  // silu: silu_mul's gate factor, with up = 1 (g·sig(g)·1 is g·sig(g)).
  Tensor ones = y;
  for (int64_t i = 0; i < count(y.shape); ++i)
    ptr<float>(ones)[i] = 1.0f;
  return runOk(Call("silu_mul", {&y, &ones}));
}

void check(Rng &rng, const Case &c) {
  SCOPED_TRACE(label(c));
  const bool kn = c.layout == "kn";
  const Weight w =
      makeWeight(rng, c.dt, kn ? Shape{c.k, c.n} : Shape{c.n, c.k});
  Tensor wp = w.t;
  if (c.layout == "nk16") {
    ASSERT_TRUE(packWeight("nk16", w.t.data.data(), c.n, c.k, dtypeSize(c.dt),
                           wp.data.data())
                    .isOk());
  }
  const Weight b = makeWeight(rng, c.dt, {c.n});
  // Pre-activations around 0 on both sides: x and w in [-1, 1].
  const Tensor x = rng.uniform({c.m, c.k}), r = rng.uniform({c.m, c.n}, -2, 2);

  // Unfused: the plain "nk"/"kn" linear on the row-major weight, then the
  // activation, then add.
  Tensor want = runOk(Call("linear", {&x, &w.t, c.bias ? &b.t : nullptr},
                           {strAttr("w_layout", kn ? "kn" : "nk")}));
  want = activate(c.act, want);
  if (c.res != Res::None)
    want = runOk(Call("add", {&want, &r}));

  std::vector<const Tensor *> ins = {&x, &wp, c.bias ? &b.t : nullptr};
  if (c.res != Res::None)
    ins.push_back(&r);
  Call fused("linear", ins,
             {strAttr("w_layout", c.layout), strAttr("activation", c.act)});
  if (c.res == Res::Aliased)
    fused.aliasInput = 3;
  if (c.layout == "nk16")
    fused.layouts = {"", "nk16"};
  const Tensor got = runOk(fused);
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_TRUE(got.data == want.data);
}

const char *kActs[] = {"none", "relu",      "silu",
                       "gelu", "gelu_tanh", "hard_swish"};
const char *kLayouts[] = {"nk", "kn", "nk16"};

TEST(LinearEpilogue, EqualsSeparateKernels) {
  Rng rng(6060);
  for (DType dt : {DType::F32, DType::BF16})
    for (const char *layout : kLayouts)
      for (int64_t m : {1, 3, 33, 70})
        for (const char *act : kActs)
          for (bool bias : {false, true})
            for (Res res : {Res::None, Res::Own, Res::Aliased})
              check(rng, {m, 133, 77, dt, layout, act, bias, res});
}

TEST(LinearEpilogue, SeveralChunksPerThread) {
  // Prefill panels (K = 520: several column panels) and decode ranges cut
  // into epilogue pieces (m = 3: pieces of ~2.7K columns), residual in y.
  Rng rng(6161);
  for (const char *layout : kLayouts)
    for (const char *act : kActs) {
      for (int64_t m : {33, 70})
        check(rng, {m, 261, 520, DType::BF16, layout, act, true, Res::Aliased});
      check(rng, {3, 6000, 16, DType::F16, layout, act, true, Res::Aliased});
      check(rng, {3, 6000, 16, DType::F32, layout, act, false, Res::Own});
    }
}

TEST(LinearEpilogue, RejectsBadOperands) {
  Rng rng(3);
  const Tensor x = rng.uniform({2, 8}), w = rng.uniform({4, 8}),
               r = rng.uniform({2, 5});
  std::vector<Tensor> outs;
  EXPECT_FALSE(runKernel(Call("linear", {&x, &w, nullptr, &r},
                              {strAttr("w_layout", "nk")}),
                         &outs)
                   .isOk());
  EXPECT_FALSE(runKernel(Call("linear", {&x, &w},
                              {strAttr("w_layout", "nk"),
                               strAttr("activation", "tanh")}),
                         &outs)
                   .isOk());
}

} // namespace
