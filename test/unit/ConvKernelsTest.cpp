//===- ConvKernelsTest.cpp - conv kernels vs direct loops in float64 ------===//
//
// The conv kernel's paths (implicit GEMM, im2col blocks, a direct 1x1,
// transposed narrow GEMMs, depthwise, 1-D and 3-D windows) against a direct
// convolution written from the ONNX definition, within the rigorous
// bound of a k-term float sum.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "cpu/StepCache.h"

using namespace ingot;
using namespace ingot::test;

namespace {

/// Direct convolution over NCHW with explicit pads; `mag` gets each
/// output's Σ|term| (bias included), the scale of its rounding error.
std::vector<double> naiveConv(const Tensor &x, const Tensor &w, const Tensor *b,
                              int64_t group, int64_t s, int64_t sw, int64_t d,
                              int64_t p, Shape *out, std::vector<double> *mag) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t m = w.shape[0], kh = w.shape[2], kw = w.shape[3];
  int64_t oh = (h + 2 * p - (kh - 1) * d - 1) / s + 1;
  int64_t ow = (wd + 2 * p - (kw - 1) * d - 1) / sw + 1;
  *out = {n, m, oh, ow};
  std::vector<double> y;
  int64_t cg = c / group, mg = m / group;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t om = 0; om < m; ++om)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = b ? ptr<float>(*b)[om] : 0.0, sum = std::fabs(acc);
          int64_t g = om / mg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                int64_t hh = i * s - p + a * d, ww = j * sw - p + e * d;
                if (hh < 0 || hh >= h || ww < 0 || ww >= wd)
                  continue;
                const double t =
                    double(ptr<float>(
                        x)[((in * c + g * cg + ic) * h + hh) * wd + ww]) *
                    ptr<float>(w)[((om * cg + ic) * kh + a) * kw + e];
                acc += t, sum += std::fabs(t);
              }
          y.push_back(acc);
          mag->push_back(sum);
        }
  return y;
}

TEST(ConvKernels, MatchesDirectLoops) {
  Rng rng(6);
  struct C {
    Shape x, w;
    int64_t group, s, d, p;
    int64_t sw = 0; // the stride along the width when it is not s
  };
  for (const C &c : {C{{2, 3, 9, 8}, {4, 3, 3, 3}, 1, 1, 1, 1},
                     C{{1, 4, 11, 7}, {6, 2, 3, 2}, 2, 2, 2, 0},
                     C{{1, 3, 5, 5}, {3, 1, 3, 3}, 3, 1, 1, 1},
                     // Depthwise kernel: channel multiplier 2, strides,
                     // dilations, pads past the taps' reach.
                     C{{2, 4, 10, 9}, {8, 1, 3, 3}, 4, 2, 2, 2},
                     C{{1, 6, 7, 13}, {6, 1, 5, 5}, 6, 1, 1, 3},
                     // Lines of 37 and 20 outputs: whole 16-wide chunks,
                     // then one overlapping the chunk before.
                     C{{1, 8, 6, 37}, {8, 1, 5, 5}, 8, 1, 1, 2},
                     C{{1, 8, 12, 40}, {8, 1, 5, 5}, 8, 2, 1, 2},
                     // Pairs of output lines sharing input rows (7 lines:
                     // three pairs and one alone), at height strides 1 and
                     // 2 (PP-OCR's [2, 1] downsampling), 4 + 2 + 1 chunks.
                     C{{1, 3, 7, 120}, {3, 1, 5, 5}, 3, 1, 1, 2},
                     C{{1, 3, 14, 120}, {3, 1, 3, 3}, 3, 2, 1, 1, 1},
                     // depthwise lines of 4-chunk groups, a chunk and an
                     // overlapping tail (150 = 2·64 + 16 + 6), dilated
                     C{{1, 4, 5, 150}, {4, 1, 3, 3}, 4, 1, 2, 2},
                     // Group 1 and 8 channels: the implicit GEMM. Two
                     // groups: im2col in blocks of output positions
                     // (1845 >= 4 x 448), into packed panels (8 rows).
                     C{{1, 64, 45, 41}, {8, 64, 3, 3}, 1, 1, 1, 1},
                     C{{1, 128, 45, 41}, {16, 64, 3, 3}, 2, 1, 1, 1},
                     C{{2, 8, 4, 4}, {5, 8, 1, 1}, 1, 1, 1, 0},
                     // [N, C, H, 1] images by [kh, 1] kernels (TensorFlow's
                     // 1-D convs), plain, strided and depthwise.
                     C{{1, 5, 17, 1}, {4, 5, 5, 1}, 1, 1, 1, 0},
                     C{{2, 3, 12, 1}, {4, 3, 3, 1}, 1, 2, 2, 0},
                     C{{1, 4, 10, 1}, {4, 1, 3, 1}, 4, 1, 1, 0},
                     // Fewer output positions than channels: the GEMM
                     // runs transposed (im2col and a direct 1x1).
                     C{{2, 6, 5, 3}, {20, 6, 3, 3}, 1, 1, 1, 0},
                     C{{1, 8, 2, 2}, {24, 8, 1, 1}, 1, 1, 1, 0},
                     // A batch of 1- and 2-frame maps (Silero VAD's
                     // encoder): one GEMM over the whole batch.
                     C{{5, 16, 1, 1}, {32, 16, 3, 1}, 1, 1, 1, 1},
                     C{{3, 12, 4, 1}, {20, 12, 3, 1}, 1, 2, 1, 1}}) {
    Tensor x = rng.uniform(c.x), w = rng.uniform(c.w),
           b = rng.uniform({c.w[0]});
    Shape out;
    std::vector<double> mag;
    const int64_t sw = c.sw ? c.sw : c.s;
    std::vector<double> ref =
        naiveConv(x, w, &b, c.group, c.s, sw, c.d, c.p, &out, &mag);
    Call call("conv", {&x, &w, &b},
              {intAttr("group", c.group), intsAttr("strides", {c.s, sw}),
               intsAttr("dilations", {c.d, c.d}),
               intsAttr("pads", {c.p, c.p, c.p, c.p})});
    Tensor y = runOk(call);
    // A sum of k float terms (and the bias) is within (k + 2) u Σ|term| of
    // the exact one in any order, u = 2^-24: cancellation makes a bound
    // relative to the result itself unjustified at k = 576.
    const double k = double(count(c.w) / c.w[0]);
    expectClose(y, out, ref, (k + 2) * 0x1p-24, 1e-30, &mag);
    // The weight as a weight: what the kernel keeps in the step's cache
    // (packed panels) gives the same bits on the first and a later run.
    cpu::StepCache cache;
    call.constants = {false, true, true};
    call.stepCache = &cache;
    EXPECT_EQ(runOk(call).data, y.data);
    EXPECT_EQ(runOk(call).data, y.data);
  }
}

TEST(ConvKernels, Conv3DMatchesDirectLoops) {
  Rng rng(10);
  Tensor x = rng.uniform({1, 2, 4, 5, 3}), w = rng.uniform({3, 2, 2, 3, 2});
  Tensor y = runOk(Call(
      "conv", {&x, &w},
      {intsAttr("strides", {1, 2, 1}), intsAttr("pads", {1, 1, 0, 0, 1, 1})}));
  // Begin pads (1, 1, 0), end pads (0, 1, 1): output dims 4, 3, 3.
  std::vector<double> ref;
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t c = 0; c < 3; ++c) {
          double acc = 0;
          for (int64_t ic = 0; ic < 2; ++ic)
            for (int64_t i = 0; i < 2; ++i)
              for (int64_t j = 0; j < 3; ++j)
                for (int64_t k = 0; k < 2; ++k) {
                  int64_t d = a - 1 + i, h = b * 2 - 1 + j, v = c + k;
                  if (d < 0 || d >= 4 || h < 0 || h >= 5 || v >= 3)
                    continue;
                  acc +=
                      double(ptr<float>(x)[((ic * 4 + d) * 5 + h) * 3 + v]) *
                      ptr<float>(w)[(((m * 2 + ic) * 2 + i) * 3 + j) * 2 + k];
                }
          ref.push_back(acc);
        }
  expectClose(y, {1, 3, 4, 3, 3}, ref, 1e-5, 1e-5);
}

} // namespace
