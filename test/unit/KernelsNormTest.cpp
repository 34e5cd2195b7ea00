//===- KernelsNormTest.cpp - softmax, layer_norm, reduce_mean -------------===//
//
// The normalisation and reduction kernels against a naive loop in double
// precision on fresh random inputs (fixed non-zero seeds). Shapes cover
// negative axes, reductions over inner, middle and outer axes, sizes that
// are not multiples of any vector width, and rows enough to run on several
// threads. Elementwise kernels, error messages and the registry are in
// KernelsTest.cpp.
//
// Tolerances: these sum a row in f32 in another order than the reference,
// which costs a few ulps beyond one rounding, so 1e-6 relative; outputs
// near zero (normalised values, means) are compared absolutely as well.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <algorithm>

using namespace ingot;
using namespace ingot::test;

namespace {

TEST(Kernels, Softmax) {
  Rng rng(108);
  for (auto [s, axis] :
       std::vector<std::pair<Shape, int64_t>>{{{3, 5, 7}, -1},
                                              {{3, 5, 7}, 1},
                                              {{3, 5, 7}, 0},
                                              {{64, 1000}, -1},
                                              {{2, 300, 40}, -2},
                                              {{9}, 0},
                                              // Few rows: columns split.
                                              {{1, 16, 4, 2100}, 1},
                                              {{2, 7, 1501}, 1}}) {
    Tensor x = rng.uniform(s, -8, 8);
    int64_t ax = axis < 0 ? axis + int64_t(s.size()) : axis;
    int64_t outer = count(Shape(s.begin(), s.begin() + ax)), len = s[ax];
    int64_t inner = count(Shape(s.begin() + ax + 1, s.end()));
    std::vector<double> ref(count(s));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < inner; ++c) {
        auto at = [&](int64_t j) { return (o * len + j) * inner + c; };
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < len; ++j)
          mx = std::max(mx, double(ptr<float>(x)[at(j)]));
        for (int64_t j = 0; j < len; ++j)
          sum += std::exp(ptr<float>(x)[at(j)] - mx);
        for (int64_t j = 0; j < len; ++j)
          ref[at(j)] = std::exp(ptr<float>(x)[at(j)] - mx) / sum;
      }
    SCOPED_TRACE(shape::toString(s) + " axis " + std::to_string(axis));
    Call c{"softmax", {&x}, {intAttr("axis", axis)}};
    expectClose(runOk(c), s, ref, 1e-6);
    c.aliasInput = 0;
    expectClose(runOk(c), s, ref, 1e-6);
  }
}

TEST(Kernels, LayerNorm) {
  Rng rng(109);
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale, bias; // empty bias shape with hasBias=false: no bias
    bool hasBias;
  };
  for (const Case &tc :
       std::vector<Case>{{{4, 6, 32}, -1, {32}, {32}, true},
                         {{4, 6, 32}, 1, {6, 32}, {32}, true},
                         {{4, 6, 32}, -2, {1, 32}, {6, 1}, true},
                         {{3, 77}, -1, {77}, {}, false},
                         {{512, 768}, -1, {768}, {768}, true}}) {
    Tensor x = rng.uniform(tc.x, -3, 5); // mean far from 0 on purpose
    Tensor scale = rng.uniform(tc.scale, 0.5, 1.5);
    Tensor bias = rng.uniform(tc.bias);
    int64_t ax = tc.axis < 0 ? tc.axis + int64_t(tc.x.size()) : tc.axis;
    Shape norm(tc.x.begin() + ax, tc.x.end());
    int64_t rows = count(Shape(tc.x.begin(), tc.x.begin() + ax)),
            n = count(norm);
    std::vector<double> ref(count(tc.x)), means(rows), invs(rows);
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < n; ++i)
        mean += ptr<float>(x)[r * n + i];
      mean /= n;
      for (int64_t i = 0; i < n; ++i)
        var += std::pow(ptr<float>(x)[r * n + i] - mean, 2);
      var /= n;
      means[r] = mean;
      invs[r] = 1 / std::sqrt(var + 1e-5);
      for (int64_t i = 0; i < n; ++i) {
        auto idx = unravel(i, norm);
        double v = (ptr<float>(x)[r * n + i] - mean) * invs[r] *
                   ptr<float>(scale)[broadcastIndex(idx, tc.scale)];
        if (tc.hasBias)
          v += ptr<float>(bias)[broadcastIndex(idx, tc.bias)];
        ref[r * n + i] = v;
      }
    }
    Call c{"layer_norm", {&x, &scale}, {intAttr("axis", tc.axis)}};
    if (tc.hasBias)
      c.inputs.push_back(&bias);
    c.outDTypes = {DType::F32, DType::F32, DType::F32};
    std::vector<Tensor> outs;
    ASSERT_TRUE(runKernel(c, &outs).isOk());
    SCOPED_TRACE(shape::toString(tc.x));
    // Normalised values are O(1): compare absolutely at a few f32 ulps.
    expectClose(outs[0], tc.x, ref, 1e-6, 2e-6);
    Shape statShape(tc.x.begin(), tc.x.begin() + ax);
    statShape.resize(tc.x.size(), 1);
    expectClose(outs[1], statShape, means, 1e-6, 1e-7);
    expectClose(outs[2], statShape, invs, 1e-6);
  }
}

TEST(Kernels, ReduceMean) {
  Rng rng(110);
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
    int64_t keep;
  };
  for (const Case &tc : std::vector<Case>{{{2, 3, 4}, {}, 1},
                                          {{2, 3, 4}, {}, 0},
                                          {{2, 3, 4}, {1}, 1},
                                          {{2, 3, 4}, {-1}, 0},
                                          {{2, 3, 4}, {0, 2}, 1},
                                          {{5, 1, 7}, {1, 2}, 0},
                                          {{500, 300}, {-1}, 1},
                                          {{40, 50, 60}, {0}, 0}}) {
    Tensor x = rng.uniform(tc.x, -1, 3);
    const int64_t r = tc.x.size();
    std::vector<bool> red(r, tc.axes.empty());
    for (int64_t a : tc.axes)
      red[a < 0 ? a + r : a] = true;
    Shape kept = tc.x, out;
    for (int64_t i = 0; i < r; ++i) {
      if (red[i])
        kept[i] = 1;
      if (!red[i] || tc.keep)
        out.push_back(kept[i]);
    }
    std::vector<double> sum(count(kept), 0.0);
    for (int64_t i = 0; i < count(tc.x); ++i)
      sum[broadcastIndex(unravel(i, tc.x), kept)] += ptr<float>(x)[i];
    double n = double(count(tc.x)) / count(kept);
    for (double &s : sum)
      s /= n;
    Call c{"reduce_mean",
           {&x},
           {intsAttr("axes", tc.axes), intAttr("keepdims", tc.keep)}};
    SCOPED_TRACE(shape::toString(tc.x));
    expectClose(runOk(c), out, sum, 1e-6, 1e-7);
  }
  // Opset-18 style: axes as an input.
  Tensor x = rng.uniform({3, 4}), axes = i64({1}, {0});
  Tensor out = runOk({"reduce_mean", {&x, &axes}, {intAttr("keepdims", 0)}});
  EXPECT_EQ(out.shape, Shape{4});
  Tensor same =
      runOk({"reduce_mean", {&x}, {intAttr("noop_with_empty_axes", 1)}});
  EXPECT_EQ(same.shape, x.shape);
  EXPECT_EQ(same.data, x.data);
}

} // namespace
