//===- TensorResizeAntialias.cpp - resize with antialias = 1 --------------===//
//
// Downsampling with antialias widens the linear (triangle) or cubic
// (Keys) filter by 1 / scale so every input contributes, with the weights
// of each output normalised to sum to 1; upsampling keeps the plain
// filter. The resize is separable: one 1-D pass per resized dim, dims in
// order, as onnx's reference computes it.
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorResize.h"

#include <algorithm>
#include <cmath>

namespace ingot::cpu {
namespace {

/// The filter taps of one output: input indices (edge clamped) and weights.
struct Taps {
  std::vector<int64_t> idx;
  std::vector<float> wt;
};

/// Keys' cubic kernel with coefficient a at distance x.
float keys(float x, float a) {
  x = std::fabs(x);
  if (x <= 1)
    return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2)
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0f;
}

/// Taps of source coordinate c on an input of `len`: offsets
/// first .. 1 - first from base = the index left of c (c − 1 when c is a
/// whole number, the reference's preference), weighed at
/// (offset − ratio) · min(scale, 1) and normalised.
Taps tapsOf(float c, int64_t len, float scale, bool cubic, float a,
            bool excludeOutside) {
  const float s = std::min(scale, 1.0f);
  float ratio = c - std::floor(c);
  if (ratio == 0.0f)
    ratio = 1.0f;
  const int64_t base = int64_t(std::llround(c - ratio));
  const int64_t first = int64_t(std::floor((cubic ? -2.0f : -1.0f) / s)) + 1;
  Taps t;
  float sum = 0.0f;
  for (int64_t i = first; i < 2 - first; ++i) {
    const float x = (float(i) - ratio) * s;
    float w = cubic ? keys(x, a) : std::clamp(1.0f - std::fabs(x), 0.0f, 1.0f);
    const int64_t j = base + i;
    if (excludeOutside && (j < 0 || j >= len))
      w = 0.0f;
    t.idx.push_back(std::clamp<int64_t>(j, 0, len - 1));
    t.wt.push_back(w);
    sum += w;
  }
  for (float &w : t.wt)
    w = sum != 0.0f ? w / sum : w;
  return t;
}

/// One 1-D pass along dim d of `src` (shape `in`) into `dst`.
void resizeAlong(KernelContext &ctx, const std::vector<float> &src,
                 const shape::Shape &in, size_t d,
                 const std::vector<Taps> &taps, std::vector<float> &dst) {
  const int64_t outer = dimProduct(in, 0, d),
                inner = dimProduct(in, d + 1, in.size());
  const int64_t len = in[d], outLen = int64_t(taps.size());
  dst.assign(size_t(outer * outLen * inner), 0.0f);
  ctx.parallelFor(outer * outLen, std::max<int64_t>(1, 4096 / inner),
                  [&](int64_t t0, int64_t t1) {
                    for (int64_t t = t0; t < t1; ++t) {
                      const int64_t p = t / outLen, o = t % outLen;
                      const Taps &tp = taps[size_t(o)];
                      float *y = dst.data() + t * inner;
                      for (size_t k = 0; k < tp.idx.size(); ++k) {
                        const float *x =
                            src.data() + (p * len + tp.idx[k]) * inner;
                        for (int64_t i = 0; i < inner; ++i)
                          y[i] += tp.wt[k] * x[i];
                      }
                    }
                  });
}

} // namespace

Status resizeAntialias(KernelContext &ctx, const std::vector<double> &scales,
                       const std::vector<float> &scale, const shape::Shape &out,
                       const std::string &ctm, bool cubic) {
  const KernelInput &x = ctx.input(0);
  float a;
  bool exclude;
  if (Status s = cubicAttrs(ctx, &a, &exclude); !s)
    return s;
  shape::Shape cur = x.shape;
  std::vector<float> data(x.as<float>(), x.as<float>() + x.numElements()), next;
  for (size_t d = 0; d < cur.size(); ++d) {
    const int64_t len = cur[d];
    if (scale[d] == 1.0f && out[d] == len)
      continue;
    std::vector<Taps> taps;
    for (int64_t o = 0; o < out[d]; ++o) {
      const float outLen =
          !scales.empty() ? float(len) * scale[d] : float(out[d]);
      taps.push_back(tapsOf(sourceCoord(o, scale[d], len, outLen, out[d], ctm),
                            len, scale[d], cubic, a, exclude));
    }
    resizeAlong(ctx, data, cur, d, taps, next);
    data.swap(next);
    cur[d] = out[d];
  }
  std::copy(data.begin(), data.end(), ctx.output(0).as<float>());
  return Status::ok();
}

} // namespace ingot::cpu
