//===- PoolKernelsTest.cpp - max/average pooling vs naive loops ----------===//
//
// The pooling kernels of PoolKernels.cpp against references written from the
// ONNX definition with plain index loops: argmax indices, NaN propagation
// through the separable 2-D max pool, padding counted or not.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <cstring>

#include <algorithm>
#include <cmath>

using namespace ingot;
using namespace ingot::test;

namespace {

TEST(PoolKernels, MaxPoolIndices) {
  Rng rng(11);
  Tensor x = rng.uniform({2, 1, 4, 5});
  std::vector<Tensor> outs;
  Call c("max_pool", {&x},
         {intsAttr("kernel_shape", {2, 3}), intsAttr("strides", {2, 2}),
          intAttr("select", 1)},
         {DType::I64});
  ASSERT_TRUE(runKernel(c, &outs).isOk());
  ASSERT_EQ(outs[0].shape, (Shape{2, 1, 2, 2}));
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        int64_t best = -1;
        for (int64_t a = 0; a < 2; ++a)
          for (int64_t b = 0; b < 3; ++b) {
            int64_t at = p * 20 + (2 * i + a) * 5 + 2 * j + b;
            if (best < 0 || ptr<float>(x)[at] > ptr<float>(x)[best])
              best = at;
          }
        EXPECT_EQ(ptr<int64_t>(outs[0])[(p * 2 + i) * 2 + j], best);
      }
}

TEST(PoolKernels, MaxPoolNanWinsOnlyInItsWindows) {
  // 5x5 stride-1 pad-2 (YOLOv8's SPPF) runs as flat passes over the
  // plane padded with -inf.
  Rng rng(12);
  Tensor x = rng.uniform({1, 1, 7, 6});
  ptr<float>(x)[3 * 6 + 1] = NAN;
  Tensor y = runOk(
      Call("max_pool", {&x},
           {intsAttr("kernel_shape", {5, 5}), intsAttr("pads", {2, 2, 2, 2})}));
  ASSERT_EQ(y.shape, (Shape{1, 1, 7, 6}));
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      float got = ptr<float>(y)[i * 6 + j];
      if (std::abs(i - 3) <= 2 && std::abs(j - 1) <= 2) {
        EXPECT_TRUE(std::isnan(got)) << i << "," << j;
        continue;
      }
      float best = -INFINITY;
      for (int64_t a = std::max<int64_t>(0, i - 2);
           a <= std::min<int64_t>(6, i + 2); ++a)
        for (int64_t b = std::max<int64_t>(0, j - 2);
             b <= std::min<int64_t>(5, j + 2); ++b)
          best = std::max(best, ptr<float>(x)[a * 6 + b]);
      EXPECT_EQ(got, best) << i << "," << j;
    }
}

TEST(PoolKernels, StrideOneMaxPoolsMatchDirectLoops) {
  // Asymmetric pads, a window wider than high and one the other way,
  // over maps narrower and wider than a vector; -inf and negative values
  // must survive the -inf padding.
  struct Case {
    int64_t h, w, kh, kw;
    std::vector<int64_t> pads; // top, left, bottom, right
  };
  const Case cases[] = {{10, 10, 5, 5, {2, 2, 2, 2}},
                        {7, 23, 3, 2, {1, 0, 2, 1}},
                        {4, 3, 2, 3, {0, 2, 1, 0}}};
  Rng rng(31);
  for (const Case &c : cases) {
    Tensor x = rng.uniform({1, 2, c.h, c.w});
    ptr<float>(x)[c.w + 1] = -INFINITY;
    Tensor y = runOk(Call(
        "max_pool", {&x},
        {intsAttr("kernel_shape", {c.kh, c.kw}), intsAttr("pads", c.pads)}));
    const int64_t oh = c.h + c.pads[0] + c.pads[2] - c.kh + 1;
    const int64_t ow = c.w + c.pads[1] + c.pads[3] - c.kw + 1;
    ASSERT_EQ(y.shape, (Shape{1, 2, oh, ow}));
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float best = -INFINITY;
          for (int64_t a = 0; a < c.kh; ++a)
            for (int64_t b = 0; b < c.kw; ++b) {
              const int64_t r = i - c.pads[0] + a, q = j - c.pads[1] + b;
              if (r >= 0 && r < c.h && q >= 0 && q < c.w)
                best = std::max(best, ptr<float>(x)[(p * c.h + r) * c.w + q]);
            }
          EXPECT_EQ(ptr<float>(y)[(p * oh + i) * ow + j], best)
              << c.h << "x" << c.w << " " << p << "," << i << "," << j;
        }
  }
}

TEST(PoolKernels, NarrowMaxPoolReadsWindowsDirectly) {
  // openWakeWord's unpadded 2x2 and [1, 2] pools over maps narrower than
  // 16 output columns: each window read directly; a window with a NaN (or
  // an infinity) is redone with the NaN test, the first NaN winning.
  Rng rng(13);
  Tensor x = rng.uniform({2, 3, 9, 14}, -2, 2);
  float *p = ptr<float>(x);
  p[14 + 3] = NAN;  // plane 0, row 1, col 3
  p[14 + 2] = -NAN; // the same 2x2 window, earlier in row-major
  p[2 * 126 + 5 * 14 + 8] = INFINITY;
  p[4 * 126 + 7] = -INFINITY;
  for (const std::vector<int64_t> &k :
       {std::vector<int64_t>{2, 2}, std::vector<int64_t>{1, 2}}) {
    const int64_t oh = 9 / k[0], ow = 14 / k[1];
    Tensor y =
        runOk(Call("max_pool", {&x},
                   {intsAttr("kernel_shape", k), intsAttr("strides", k)}));
    ASSERT_EQ(y.shape, (Shape{2, 3, oh, ow}));
    for (int64_t pl = 0; pl < 6; ++pl)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float want = -INFINITY;
          for (int64_t a = 0; a < k[0]; ++a)
            for (int64_t b = 0; b < k[1]; ++b) {
              const float v = p[(pl * 9 + i * k[0] + a) * 14 + j * k[1] + b];
              if ((v > want || v != v) && want == want)
                want = v;
            }
          uint32_t got, ref;
          std::memcpy(&got, &ptr<float>(y)[(pl * oh + i) * ow + j], 4);
          std::memcpy(&ref, &want, 4);
          EXPECT_EQ(got, ref) << pl << " " << i << "," << j;
        }
  }
}

TEST(PoolKernels, NarrowCeilModeWindowsStayInside) {
  // ceil_mode adds a last column whose window runs past the input: read
  // with bounds checks (onnx's test_maxpool_2d_ceil: 4x4 by 3x3, stride 2).
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i)
    v[size_t(i)] = float(i + 1);
  Tensor x = f32({1, 1, 4, 4}, v);
  Tensor y =
      runOk(Call("max_pool", {&x},
                 {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}),
                  intAttr("ceil_mode", 1)}));
  ASSERT_EQ(y.shape, (Shape{1, 1, 2, 2}));
  EXPECT_EQ(std::vector<float>(ptr<float>(y), ptr<float>(y) + 4),
            (std::vector<float>{11, 12, 15, 16}));
}

TEST(PoolKernels, PoolsMatchDirectLoops) {
  Rng rng(7);
  Tensor x = rng.uniform({1, 2, 6, 5});
  for (bool isMax : {true, false})
    for (int64_t include : {0, 1}) {
      Tensor y = runOk(
          Call(isMax ? "max_pool" : "average_pool", {&x},
               {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}),
                intsAttr("pads", {1, 1, 1, 1}),
                intAttr("count_include_pad", include)}));
      std::vector<double> ref;
      for (int64_t p = 0; p < 2; ++p)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 3; ++j) {
            double acc = isMax ? -1e30 : 0;
            int64_t n = 0;
            for (int64_t a = 0; a < 3; ++a)
              for (int64_t b = 0; b < 3; ++b) {
                int64_t h = 2 * i - 1 + a, w = 2 * j - 1 + b;
                if (h < 0 || h >= 6 || w < 0 || w >= 5)
                  continue;
                double v = ptr<float>(x)[(p * 6 + h) * 5 + w];
                acc = isMax ? std::max(acc, v) : acc + v;
                ++n;
              }
            ref.push_back(isMax ? acc : acc / (include ? 9 : n));
          }
      expectClose(y, {1, 2, 3, 3}, ref, 1e-6);
    }
  Tensor g = runOk(Call("global_average_pool", {&x}));
  std::vector<double> ref(2, 0.0);
  for (int64_t i = 0; i < 60; ++i)
    ref[i / 30] += ptr<float>(x)[i] / 30.0;
  expectClose(g, {1, 2, 1, 1}, ref, 1e-6);
}

} // namespace
