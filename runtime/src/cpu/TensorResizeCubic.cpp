//===- TensorResizeCubic.cpp - resize, cubic mode ------------------------===//
//
// Four taps per dim weighted by Keys' cubic convolution kernel, as the
// ONNX reference weighs them; dims whose weights are all (0, 1, 0, 0)
// read their second tap only.
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorResize.h"

#include <algorithm>
#include <cmath>

namespace ingot::cpu {
namespace {

/// Cubic taps of one output index along one dim: source indices (edge
/// clamped) and weights of floor(c) - 1 .. floor(c) + 2.
struct CubicMap {
  std::vector<int64_t> idx; // 4 per output index
  std::vector<float> wt;
  std::vector<uint8_t> outside; // tf_crop_and_resize: past the input
  bool blends = false;          // some weight vector is not (0, 1, 0, 0)
};

/// Keys' cubic convolution weights with coefficient `a`, in the ONNX
/// reference's expressions (|x| <= 1 near, 1 < |x| < 2 far). With
/// exclude_outside, taps past the input get 0 and the rest renormalise.
void cubicTaps(float c, int64_t len, float a, bool excludeOutside, int64_t *idx,
               float *wt) {
  const float f = std::floor(c), t = c - f;
  auto nearW = [a](float x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto farW = [a](float x) {
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  };
  float w[4] = {farW(t + 1), nearW(t), nearW(1 - t), farW(2 - t)};
  float sum = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t j = int64_t(f) - 1 + k;
    if (excludeOutside && (j < 0 || j >= len))
      w[k] = 0;
    sum += w[k];
    idx[k] = std::clamp<int64_t>(j, 0, len - 1);
  }
  for (int k = 0; k < 4; ++k)
    wt[k] = excludeOutside && sum != 0 ? w[k] / sum : w[k];
}

/// Cubic resize rows: like resizeRows with 4 taps per blended dim (4^n
/// corner combinations of the blended outer dims per row); dims whose
/// weights are all (0, 1, 0, 0) read their second tap only.
void resizeCubicRows(KernelContext &ctx, const std::vector<CubicMap> &maps,
                     const shape::Shape &in, const shape::Shape &out,
                     const Crop &crop) {
  const size_t rank = in.size(), last = rank - 1;
  std::vector<size_t> blended;
  for (size_t d = 0; d < last; ++d)
    if (maps[d].blends)
      blended.push_back(d);
  const std::vector<int64_t> st = stridesOf(in);
  const float *src = ctx.input(0).as<float>();
  float *dst = ctx.output(0).as<float>();
  const int64_t len = out[last], rows = shape::numElements(out) / len;
  const CubicMap &lm = maps[last];
  const size_t combos = size_t(1) << (2 * blended.size());
  ctx.parallelFor(
      rows, std::max<int64_t>(1, 4096 / len), [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> off(combos), idx(rank, 0);
        std::vector<float> wgt(combos);
        for (int64_t r = r0; r < r1; ++r) {
          int64_t base = 0, rem = r;
          bool outside = false;
          for (size_t d = last; d-- > 0;) {
            idx[d] = rem % out[d], rem /= out[d];
            if (!maps[d].blends)
              base += maps[d].idx[idx[d] * 4 + 1] * st[d];
            outside |= crop.any(maps[d].outside, idx[d]);
          }
          if (outside) {
            std::fill(dst + r * len, dst + (r + 1) * len, crop.extrapolation);
            continue;
          }
          for (size_t c = 0; c < combos; ++c) {
            off[c] = base, wgt[c] = 1.0f;
            for (size_t b = 0; b < blended.size(); ++b) {
              const CubicMap &m = maps[blended[b]];
              const int64_t at =
                  idx[blended[b]] * 4 + int64_t(c >> (2 * b) & 3);
              off[c] += m.idx[at] * st[blended[b]];
              wgt[c] *= m.wt[at];
            }
          }
          float *row = dst + r * len;
          for (int64_t o = 0; o < len; ++o) {
            float acc = 0.0f;
            for (size_t c = 0; c < combos; ++c) {
              const float *p = src + off[c];
              float v = p[lm.idx[o * 4 + 1] * st[last]];
              if (lm.blends) {
                v = 0.0f;
                for (int k = 0; k < 4; ++k)
                  v += lm.wt[o * 4 + k] * p[lm.idx[o * 4 + k] * st[last]];
              }
              acc += wgt[c] * v;
            }
            row[o] = crop.any(lm.outside, o) ? crop.extrapolation : acc;
          }
        }
      });
}

} // namespace

/// Builds the cubic tap maps of every dim and runs the rows.
Status resizeCubic(KernelContext &ctx, const std::vector<double> &scales,
                   const std::vector<float> &scale, const shape::Shape &out,
                   const std::string &ctm, const Crop &crop) {
  const KernelInput &x = ctx.input(0);
  float a;
  bool exclude;
  if (Status s = cubicAttrs(ctx, &a, &exclude); !s)
    return s;
  const size_t rank = x.shape.size();
  std::vector<CubicMap> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    CubicMap &m = maps[d];
    const int64_t len = x.shape[d];
    m.idx.resize(size_t(out[d] * 4));
    m.wt.resize(m.idx.size());
    for (int64_t o = 0; o < out[d]; ++o) {
      float outLen = !scales.empty() ? float(len) * scale[d] : float(out[d]);
      float c = sourceCoord(o, scale[d], len, outLen, out[d], ctm,
                            roiStart(crop, d), roiEnd(crop, d, rank));
      if (!crop.roi.empty())
        m.outside.push_back(c < 0 || c > float(len - 1));
      cubicTaps(c, len, a, exclude, &m.idx[o * 4], &m.wt[o * 4]);
      const float *w = &m.wt[o * 4];
      m.blends |= w[0] != 0 || w[1] != 1 || w[2] != 0 || w[3] != 0;
    }
  }
  if (rank == 0)
    ctx.output(0).as<float>()[0] = x.as<float>()[0];
  else
    resizeCubicRows(ctx, maps, x.shape, out, crop);
  return Status::ok();
}

} // namespace ingot::cpu
