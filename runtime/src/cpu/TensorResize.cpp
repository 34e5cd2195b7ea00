//===- TensorResize.cpp - resize (nearest, linear, cubic) ----------------===//
//
// Each dim gets a table mapping output index -> (source index, next index,
// weight of the next), computed in f32 as onnxruntime does. Nearest uses
// the first index only; linear blends the two along every dim whose
// weights are not all zero (dims left alone cost nothing). Cubic has its
// own four-tap tables (TensorResizeCubic.cpp).
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorResize.h"

#include <cmath>
#include <cstring>

namespace ingot::cpu {
namespace {

struct AxisMap {
  std::vector<int64_t> i0, i1;
  std::vector<float> w1;
  std::vector<uint8_t> outside; // tf_crop_and_resize: past the input
  bool blends = false;
};

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
                const shape::Shape &in, const shape::Shape &out,
                const Crop &crop) {
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
        int64_t lastCopy = -1; // source offset of the last row gathered
        // The row's index in the outer dims, counted up row by row (a
        // division per dim and row cost more than a short row's copy).
        for (int64_t d = int64_t(last) - 1, rem = r0; d >= 0; --d)
          idx[size_t(d)] = rem % out[size_t(d)], rem /= out[size_t(d)];
        for (int64_t r = r0; r < r1; ++r) {
          if (r > r0)
            for (size_t d = last; d-- > 0;) {
              if (++idx[d] < out[d])
                break;
              idx[d] = 0;
            }
          int64_t base = 0;
          bool outside = false;
          for (size_t d = 0; d < last; ++d) {
            base += maps[d].i0[idx[d]] * st[d];
            outside |= crop.any(maps[d].outside, idx[d]);
          }
          float *row = dst + r * len;
          if (outside) {
            std::fill(row, row + len, crop.extrapolation);
            lastCopy = -1;
            continue;
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
          if (combos == 1 && !lastBlends) { // nearest, or no blend at all
            // The weight is 1 (x * 1 is x, bit for bit). An upsampled row
            // reads the same source row as the row before it: a copy
            // (YOLOv8n's 2x nearest upsamples gathered every row twice).
            if (off[0] == lastCopy) {
              std::memcpy(row, row - len, size_t(len) * sizeof(float));
              continue;
            }
            const float *from = src + off[0];
            for (int64_t o = 0; o < len; ++o)
              row[o] = from[lm.i0[o] * st[last]];
            for (int64_t o = 0; o < len && !lm.outside.empty(); ++o)
              row[o] = lm.outside[size_t(o)] ? crop.extrapolation : row[o];
            lastCopy = off[0];
            continue;
          }
          lastCopy = -1;
          for (int64_t o = 0; o < len; ++o) {
            float acc = 0.0f;
            for (size_t c = 0; c < combos; ++c)
              acc += (lastBlends ? wgt[c] * (1.0f - lm.w1[o]) : wgt[c]) *
                     src[off[c] + lm.i0[o] * st[last]];
            if (lastBlends)
              for (size_t c = 0; c < combos; ++c)
                acc += wgt[c] * lm.w1[o] * src[off[c] + lm.i1[o] * st[last]];
            row[o] = crop.any(lm.outside, o) ? crop.extrapolation : acc;
          }
        }
      });
}

/// One input row repeated `f` times per element into dst. Cloned per ISA
/// so the f = 2 case vectorises (YOLOv8's 2x nearest upsamples).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
repeatElements(const float *src, int64_t w, int64_t f, float *dst) {
  if (f == 2) {
    for (int64_t j = 0; j < w; ++j)
      dst[2 * j] = dst[2 * j + 1] = src[j];
    return;
  }
  for (int64_t j = 0; j < w; ++j)
    for (int64_t t = 0; t < f; ++t)
      dst[j * f + t] = src[j];
}

/// Nearest resize whose last two dims grow by integer factors (output
/// index o reads o / f) and whose outer dims stay: each input row is
/// expanded once and copied to the rows that repeat it. resizeRows spent
/// more per output row on finding its source than on its 20 to 40 values
/// (YOLOv8n's two upsamples, 0.38 ms at 2 threads). False when the maps
/// are not of that form.
bool integerUpsample(KernelContext &ctx, const std::vector<AxisMap> &maps,
                     const shape::Shape &in, const shape::Shape &out) {
  const size_t rank = in.size();
  if (rank < 2)
    return false;
  int64_t factor[2] = {1, 1}, planes = 1;
  for (size_t d = 0; d < rank; ++d) {
    const AxisMap &m = maps[d];
    if (m.blends || !m.outside.empty() || in[d] == 0 || out[d] % in[d] != 0)
      return false;
    const int64_t f = out[d] / in[d];
    for (int64_t o = 0; o < out[d]; ++o)
      if (m.i0[size_t(o)] != o / f)
        return false;
    if (d + 2 < rank) {
      if (f != 1)
        return false;
      planes *= in[d];
    } else {
      factor[d + 2 - rank] = f;
    }
  }
  const int64_t h = in[rank - 2], w = in[rank - 1];
  const int64_t fh = factor[0], fw = factor[1], ow = w * fw;
  const float *src = ctx.input(0).as<float>();
  float *dst = ctx.output(0).as<float>();
  ctx.parallelFor(planes * h, std::max<int64_t>(1, 8192 / (ow * fh)),
                  [&](int64_t r0, int64_t r1) {
                    for (int64_t r = r0; r < r1; ++r) {
                      float *row = dst + r * fh * ow;
                      repeatElements(src + r * w, w, fw, row);
                      for (int64_t t = 1; t < fh; ++t)
                        std::memcpy(row + t * ow, row,
                                    size_t(ow) * sizeof(float));
                    }
                  });
  return true;
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

/// tf_crop_and_resize's roi (input 3: starts then ends, 2 per dim) and
/// extrapolation value; nothing for the other modes.
Status readCrop(KernelContext &ctx, const std::string &ctm, size_t rank,
                Crop *crop) {
  if (ctm != "tf_crop_and_resize")
    return Status::ok();
  if (!ctx.hasInput(3))
    return ctx.error("tf_crop_and_resize needs a roi");
  const KernelInput &roi = ctx.input(3);
  if (Status s = ctx.expectInputDType(3, {DType::F32}); !s)
    return s;
  if (size_t(roi.numElements()) != 2 * rank)
    return ctx.error("roi '" + roi.name + "' has " +
                     std::to_string(roi.numElements()) + " entries; expected " +
                     std::to_string(2 * rank) + " (start and end per dim)");
  crop->roi.assign(roi.as<float>(), roi.as<float>() + 2 * rank);
  double extrapolation;
  if (Status s = ctx.attrFloat("extrapolation_value", &extrapolation, 0.0); !s)
    return s;
  crop->extrapolation = float(extrapolation);
  return Status::ok();
}

Status resizeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 4, 1); !s)
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
  Crop crop;
  if (Status s = readCrop(ctx, ctm, rank, &crop); !s)
    return s;
  int64_t antialias;
  if (Status s = ctx.attrInt("antialias", &antialias, 0); !s)
    return s;
  if (antialias != 0) {
    if (mode == "nearest" || !crop.roi.empty())
      return ctx.error("antialias with mode '" + mode + "' and " + ctm +
                       " is not supported");
    return resizeAntialias(ctx, scales, scale, out, ctm, mode == "cubic");
  }
  if (mode == "cubic")
    return resizeCubic(ctx, scales, scale, out, ctm, crop);
  const bool linear = mode == "linear";
  std::vector<AxisMap> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    AxisMap &m = maps[d];
    const int64_t len = x.shape[d];
    for (int64_t o = 0; o < out[d]; ++o) {
      float outLen = !scales.empty() ? float(len) * scale[d] : float(out[d]);
      float c = sourceCoord(o, scale[d], len, outLen, out[d], ctm,
                            roiStart(crop, d), roiEnd(crop, d, rank));
      if (!crop.roi.empty())
        m.outside.push_back(c < 0 || c > float(len - 1));
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
  else if (!integerUpsample(ctx, maps, x.shape, out))
    resizeRows(ctx, maps, x.shape, out, crop);
  return Status::ok();
}

} // namespace

void addResizeKernels(std::vector<KernelImpl> &table) {
  table.push_back({"resize", resizeKernel});
}

} // namespace ingot::cpu
