//===- TensorResize.cpp - resize (nearest, linear, cubic) ----------------===//
//
// Each dim gets a table mapping output index -> (source index, next index,
// weight of the next), computed in f32 as onnxruntime does. Nearest uses
// the first index only; linear blends the two along every dim whose
// weights are not all zero (dims left alone cost nothing). Cubic has its
// own four-tap tables (Keys' kernel, as the ONNX reference weighs them).
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorKernels.h"

#include <cmath>

namespace ingot::cpu {
namespace {

struct AxisMap {
  std::vector<int64_t> i0, i1;
  std::vector<float> w1;
  bool blends = false;
};

/// Source coordinate of output index `o`. `outLen` is the real output
/// length in (in · scale when scales were given, unfloored, as the ONNX
/// reference uses it), `outInt` the integer one.
float sourceCoord(int64_t o, float scale, int64_t inLen, float outLen,
                  int64_t outInt, const std::string &ctm) {
  if (ctm == "half_pixel")
    return (float(o) + 0.5f) / scale - 0.5f;
  if (ctm == "pytorch_half_pixel")
    return outInt > 1 ? (float(o) + 0.5f) / scale - 0.5f : 0.0f;
  if (ctm == "align_corners")
    return outLen == 1.0f ? 0.0f : float(o) * float(inLen - 1) / (outLen - 1);
  if (ctm == "half_pixel_symmetric") {
    // Centres the output canvas on the input when floor() shortened it.
    float offset = float(inLen) / 2 * (1 - float(outInt) / outLen);
    return offset + (float(o) + 0.5f) / scale - 0.5f;
  }
  return float(o) / scale; // asymmetric
}

int64_t nearestIndex(float x, const std::string &mode) {
  if (mode == "floor")
    return int64_t(std::floor(x));
  if (mode == "ceil")
    return int64_t(std::ceil(x));
  float f = std::floor(x);
  if (x - f == 0.5f)
    return int64_t(mode == "round_prefer_ceil" ? f + 1 : f);
  return int64_t(std::round(x));
}

/// Output rows (every dim but the last fixed) in parallel. Per row, the
/// corners of the blended outer dims are found once; along the last dim
/// each element sums its corners in the order of the per-element
/// definition (bit b of a corner picks dim blend[b]'s second index, the
/// last dim being the highest bit), so weights multiply in the same order.
void resizeRows(KernelContext &ctx, const std::vector<AxisMap> &maps,
                const shape::Shape &in, const shape::Shape &out) {
  const size_t rank = in.size(), last = rank - 1;
  std::vector<size_t> outerBlend;
  for (size_t d = 0; d < last; ++d)
    if (maps[d].blends)
      outerBlend.push_back(d);
  const bool lastBlends = maps[last].blends;
  const std::vector<int64_t> st = stridesOf(in);
  const float *src = ctx.input(0).as<float>();
  float *dst = ctx.output(0).as<float>();
  const int64_t len = out[last], rows = shape::numElements(out) / len;
  const AxisMap &lm = maps[last];
  const size_t combos = size_t(1) << outerBlend.size();
  ctx.parallelFor(
      rows, std::max<int64_t>(1, 16384 / len), [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> off(combos), idx(rank, 0);
        std::vector<float> wgt(combos);
        for (int64_t r = r0; r < r1; ++r) {
          int64_t base = 0, rem = r;
          for (size_t d = last; d-- > 0;) {
            idx[d] = rem % out[d], rem /= out[d];
            base += maps[d].i0[idx[d]] * st[d];
          }
          for (size_t c = 0; c < combos; ++c) {
            off[c] = base, wgt[c] = 1.0f;
            for (size_t b = 0; b < outerBlend.size(); ++b) {
              const AxisMap &m = maps[outerBlend[b]];
              const int64_t o = idx[outerBlend[b]];
              if (c >> b & 1) {
                off[c] += (m.i1[o] - m.i0[o]) * st[outerBlend[b]];
                wgt[c] *= m.w1[o];
              } else {
                wgt[c] *= 1.0f - m.w1[o];
              }
            }
          }
          float *row = dst + r * len;
          if (combos == 1 && !lastBlends) { // nearest, or no blend at all
            const float *from = src + off[0];
            for (int64_t o = 0; o < len; ++o)
              row[o] = wgt[0] * from[lm.i0[o] * st[last]];
            continue;
          }
          for (int64_t o = 0; o < len; ++o) {
            float acc = 0.0f;
            for (size_t c = 0; c < combos; ++c)
              acc += (lastBlends ? wgt[c] * (1.0f - lm.w1[o]) : wgt[c]) *
                     src[off[c] + lm.i0[o] * st[last]];
            if (lastBlends)
              for (size_t c = 0; c < combos; ++c)
                acc += wgt[c] * lm.w1[o] * src[off[c] + lm.i1[o] * st[last]];
            row[o] = acc;
          }
        }
      });
}

/// Cubic taps of one output index along one dim: source indices (edge
/// clamped) and weights of floor(c) - 1 .. floor(c) + 2.
struct CubicMap {
  std::vector<int64_t> idx; // 4 per output index
  std::vector<float> wt;
  bool blends = false; // some weight vector is not (0, 1, 0, 0)
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
                     const shape::Shape &in, const shape::Shape &out) {
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
          for (size_t d = last; d-- > 0;) {
            idx[d] = rem % out[d], rem /= out[d];
            if (!maps[d].blends)
              base += maps[d].idx[idx[d] * 4 + 1] * st[d];
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
            row[o] = acc;
          }
        }
      });
}

/// Builds the cubic tap maps of every dim and runs the rows.
Status resizeCubic(KernelContext &ctx, const std::vector<double> &scales,
                   const std::vector<float> &scale, const shape::Shape &out,
                   const std::string &ctm) {
  const KernelInput &x = ctx.input(0);
  double a;
  int64_t exclude;
  if (Status s = ctx.attrFloat("cubic_coeff_a", &a, -0.75); !s)
    return s;
  if (Status s = ctx.attrInt("exclude_outside", &exclude, 0); !s)
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
      float c = sourceCoord(o, scale[d], len, outLen, out[d], ctm);
      cubicTaps(c, len, float(a), exclude != 0, &m.idx[o * 4], &m.wt[o * 4]);
      const float *w = &m.wt[o * 4];
      m.blends |= w[0] != 0 || w[1] != 1 || w[2] != 0 || w[3] != 0;
    }
  }
  if (rank == 0)
    ctx.output(0).as<float>()[0] = x.as<float>()[0];
  else
    resizeCubicRows(ctx, maps, x.shape, out);
  return Status::ok();
}

/// Scales (input 1) or sizes (input 2) read at run time, one entry per dim
/// of `axes`, written out per dim as the compile-time attributes would be.
/// keep_aspect_ratio_policy turns sizes into one scale for all axes.
Status runTimeTarget(KernelContext &ctx, std::vector<double> *scales,
                     std::vector<int64_t> *sizes) {
  const KernelInput &x = ctx.input(0);
  const bool bySizes = ctx.hasInput(2);
  const KernelInput &t = ctx.input(bySizes ? 2 : 1);
  std::vector<int64_t> axes;
  std::string policy;
  if (Status s = ctx.attrInts("axes", &axes); !s)
    return s;
  if (Status s = ctx.attrStr("keep_aspect_ratio_policy", &policy, "stretch");
      !s)
    return s;
  const size_t rank = x.shape.size();
  if (t.shape.size() != 1 || size_t(t.numElements()) != axes.size())
    return ctx.error(std::string(bySizes ? "sizes" : "scales") + " '" + t.name +
                     "' has shape " + shape::toString(t.shape) +
                     "; expected one entry per resized axis (" +
                     std::to_string(axes.size()) + ")");
  for (int64_t a : axes)
    if (a < 0 || size_t(a) >= rank)
      return ctx.error("axis " + std::to_string(a) + " is outside rank " +
                       std::to_string(rank));
  if (!bySizes) {
    scales->assign(rank, 1.0);
    for (size_t i = 0; i < axes.size(); ++i)
      (*scales)[axes[i]] = t.as<float>()[i];
    return Status::ok();
  }
  sizes->assign(x.shape.begin(), x.shape.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t v = t.dtype == DType::I32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
    if (v < 0)
      return ctx.error("sizes '" + t.name + "' holds a negative size " +
                       std::to_string(v));
    (*sizes)[axes[i]] = v;
  }
  if (policy == "stretch")
    return Status::ok();
  // One scale for every axis: the smallest (not_larger) or largest
  // (not_smaller) ratio, output dims rounded half up (ONNX reference).
  double scale = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (x.shape[axes[i]] == 0)
      return ctx.error("keep_aspect_ratio_policy on an empty dim");
    double r = double((*sizes)[axes[i]]) / double(x.shape[axes[i]]);
    scale = i == 0                   ? r
            : policy == "not_larger" ? std::min(scale, r)
                                     : std::max(scale, r);
  }
  scales->assign(rank, 1.0);
  for (int64_t a : axes) {
    (*scales)[a] = scale;
    (*sizes)[a] = int64_t(scale * double(x.shape[a]) + 0.5);
  }
  return Status::ok();
}

Status resizeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 3, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::string mode, ctm, nearest;
  if (Status s = ctx.attrFloats("scales", &scales, std::vector<double>{}); !s)
    return s;
  if (Status s = ctx.attrInts("sizes", &sizes, std::vector<int64_t>{}); !s)
    return s;
  if (Status s = ctx.attrStr("mode", &mode, "nearest"); !s)
    return s;
  if (Status s =
          ctx.attrStr("coordinate_transformation_mode", &ctm, "half_pixel");
      !s)
    return s;
  if (Status s = ctx.attrStr("nearest_mode", &nearest, "round_prefer_floor");
      !s)
    return s;
  if (ctx.hasInput(1) || ctx.hasInput(2))
    if (Status s = runTimeTarget(ctx, &scales, &sizes); !s)
      return s;
  const size_t rank = x.shape.size();
  if ((sizes.empty() ? scales.size() : sizes.size()) != rank ||
      (!sizes.empty() && !scales.empty() && scales.size() != rank))
    return ctx.error("scales or sizes need one entry per dim");
  shape::Shape out(rank);
  std::vector<float> scale(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (sizes.empty()) {
      scale[d] = float(scales[d]);
      out[d] = int64_t(std::floor(float(x.shape[d]) * scale[d]));
    } else {
      // Both given (keep_aspect_ratio_policy): sizes fix the output, scales
      // the coordinate mapping.
      out[d] = sizes[d] < 0 ? x.shape[d] : sizes[d];
      scale[d] = !scales.empty() ? float(scales[d])
                 : x.shape[d]    ? float(out[d]) / float(x.shape[d])
                                 : 1.0f;
    }
    if (scale[d] <= 0)
      return ctx.error("scales must be positive");
  }
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  if (shape::numElements(out) == 0)
    return Status::ok();
  if (shape::numElements(x.shape) == 0)
    return ctx.error("cannot resize an empty input to a non-empty output");
  if (mode == "cubic")
    return resizeCubic(ctx, scales, scale, out, ctm);
  const bool linear = mode == "linear";
  std::vector<AxisMap> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    AxisMap &m = maps[d];
    const int64_t len = x.shape[d];
    for (int64_t o = 0; o < out[d]; ++o) {
      float outLen = !scales.empty() ? float(len) * scale[d] : float(out[d]);
      float c = sourceCoord(o, scale[d], len, outLen, out[d], ctm);
      if (!linear) {
        int64_t i = std::clamp<int64_t>(nearestIndex(c, nearest), 0, len - 1);
        m.i0.push_back(i), m.i1.push_back(i), m.w1.push_back(0.0f);
        continue;
      }
      c = std::clamp(c, 0.0f, float(len - 1));
      int64_t i = std::min<int64_t>(int64_t(c), len - 1);
      float w = c - float(i);
      m.i0.push_back(i);
      m.i1.push_back(std::min<int64_t>(i + 1, len - 1));
      m.w1.push_back(w);
      m.blends |= w != 0.0f;
    }
  }
  if (rank == 0)
    ctx.output(0).as<float>()[0] = x.as<float>()[0];
  else
    resizeRows(ctx, maps, x.shape, out);
  return Status::ok();
}

} // namespace

void addResizeKernels(std::vector<KernelImpl> &table) {
  table.push_back({"resize", resizeKernel});
}

} // namespace ingot::cpu
