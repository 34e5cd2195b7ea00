//===- DenseAttentionTest.cpp - The encoders' attention kernel ------------===//
//
// `attention` against a double-precision loop over the chain it replaces
// (scores q·k·scale + mask, softmax over the keys, weighted sum of v) on
// fresh random inputs: masks of every broadcast form, query blocks that
// do not divide the rows, a value head dim unlike the key's, several
// threads. Tolerance: each output is a convex combination of v values
// (|v| <= 1) with f32 scores of length-D dot products and f32 exp
// (~1.5 ulp), so 2e-6 absolute is ~30 ulp of the largest value and far
// below what a wrong scale, mask stride or row gives.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ingot;
using namespace ingot::test;

namespace {

struct Case {
  int64_t b, sq, sk, h, d, dv;
  Shape mask; // empty: none
};

/// Mask element (b, h, i, j) of a mask of shape `ms` broadcast to 4-D.
double maskAt(const Tensor &m, int64_t b, int64_t h, int64_t i, int64_t j) {
  const Shape &ms = m.shape;
  const int64_t idx[4] = {b, h, i, j};
  int64_t off = 0, step = 1;
  for (size_t d = 4; d-- > 0;) {
    const size_t pad = 4 - ms.size();
    const int64_t n = d < pad ? 1 : ms[d - pad];
    off += (n == 1 ? 0 : idx[d]) * step;
    step *= n;
  }
  return ptr<float>(m)[off];
}

std::vector<double> reference(const Case &c, const Tensor &q, const Tensor &k,
                              const Tensor &v, const Tensor *mask,
                              double scale) {
  std::vector<double> y(c.b * c.sq * c.h * c.dv);
  std::vector<double> s(c.sk);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.h; ++h)
      for (int64_t i = 0; i < c.sq; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < c.sk; ++j) {
          double t = 0;
          for (int64_t e = 0; e < c.d; ++e)
            t += double(ptr<float>(q)[((b * c.sq + i) * c.h + h) * c.d + e]) *
                 ptr<float>(k)[((b * c.sk + j) * c.h + h) * c.d + e];
          s[j] = t * scale + (mask ? maskAt(*mask, b, h, i, j) : 0.0);
          mx = std::max(mx, s[j]);
        }
        for (double &t : s)
          sum += t = std::exp(t - mx);
        for (int64_t e = 0; e < c.dv; ++e) {
          double o = 0;
          for (int64_t j = 0; j < c.sk; ++j)
            o += s[j] / sum *
                 ptr<float>(v)[((b * c.sk + j) * c.h + h) * c.dv + e];
          y[((b * c.sq + i) * c.h + h) * c.dv + e] = o;
        }
      }
  return y;
}

TEST(DenseAttention, MatchesTheChainForEveryMaskForm) {
  Rng rng(77);
  const Case cases[] = {
      {1, 128, 128, 12, 32, 32, {1, 1, 1, 128}}, // BERT at 128 tokens
      {2, 7, 7, 4, 16, 16, {2, 1, 1, 7}},        // padding per sequence
      {2, 19, 23, 3, 8, 5, {2, 3, 19, 23}},      // a full mask, Dv != D
      {1, 33, 17, 2, 12, 12, {17}},              // a per-key row
      {3, 5, 6, 2, 4, 4, {}},                    // no mask
      {1, 1, 1, 1, 3, 2, {1, 1}}};
  for (const Case &c : cases) {
    SCOPED_TRACE("b=" + std::to_string(c.b) + " sq=" + std::to_string(c.sq) +
                 " sk=" + std::to_string(c.sk) + " mask " +
                 shape::toString(c.mask));
    Tensor q = rng.uniform({c.b, c.sq, c.h, c.d}),
           k = rng.uniform({c.b, c.sk, c.h, c.d}),
           v = rng.uniform({c.b, c.sk, c.h, c.dv});
    // Scores of a few units, and a mask that really masks (-1e4) some keys.
    Tensor m = rng.uniform(c.mask.empty() ? Shape{1} : c.mask, -2, 1);
    for (int64_t i = 0; i < count(m.shape); i += 3)
      ptr<float>(m)[i] = -1e4f;
    const double scale = 1.0 / std::sqrt(double(c.d));
    const Tensor *mask = c.mask.empty() ? nullptr : &m;
    std::vector<Tensor> outs;
    Status s = runKernel(
        {"attention", {&q, &k, &v, mask}, {floatAttr("scale", scale)}}, &outs);
    ASSERT_TRUE(s.isOk()) << s.message();
    ASSERT_EQ(outs[0].shape, (Shape{c.b, c.sq, c.h, c.dv}));
    const std::vector<double> want = reference(c, q, k, v, mask, scale);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(ptr<float>(outs[0])[i], want[i], 2e-6) << "element " << i;
  }
}

TEST(DenseAttention, RefusesMismatchedOperands) {
  Rng rng(78);
  Tensor q = rng.uniform({1, 4, 2, 8}), k = rng.uniform({1, 5, 2, 8}),
         v = rng.uniform({1, 6, 2, 8}), badMask = rng.uniform({1, 1, 3, 5}),
         q3 = rng.uniform({4, 2, 8});
  std::vector<Tensor> outs;
  Status s =
      runKernel({"attention", {&q, &k, &v}, {floatAttr("scale", 1)}}, &outs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("disagree on batch, heads, key length"),
            std::string::npos)
      << s.message();
  Tensor v5 = rng.uniform({1, 5, 2, 8});
  s = runKernel({"attention", {&q, &k, &v5, &badMask}, {floatAttr("scale", 1)}},
                &outs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("does not broadcast to the scores [1,2,4,5]"),
            std::string::npos)
      << s.message();
  s = runKernel({"attention", {&q3, &k, &v5}, {floatAttr("scale", 1)}}, &outs);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("must be [batch, seq, heads, dim]"),
            std::string::npos)
      << s.message();
}

TEST(DenseAttention, NoKeysGiveZeros) {
  Rng rng(79);
  Tensor q = rng.uniform({1, 3, 2, 4}), k = f32({1, 0, 2, 4}, {}),
         v = f32({1, 0, 2, 5}, {});
  std::vector<Tensor> outs;
  Status s =
      runKernel({"attention", {&q, &k, &v}, {floatAttr("scale", 1)}}, &outs);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(outs[0].shape, (Shape{1, 3, 2, 5}));
  for (int64_t i = 0; i < 30; ++i)
    EXPECT_EQ(ptr<float>(outs[0])[i], 0.0f);
}

} // namespace
