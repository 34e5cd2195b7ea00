//===- TensorResize.cpp - resize (nearest, linear)
//--------------------------===//
//
// Each dim gets a table mapping output index -> (source index, next index,
// weight of the next), computed in f32 as onnxruntime does. Nearest uses
// the first index only; linear blends the two along every dim whose
// weights are not all zero (dims left alone cost nothing).
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

Status resizeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
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
  std::vector<size_t> blend;
  for (size_t d = 0; d < rank; ++d)
    if (maps[d].blends)
      blend.push_back(d);
  const std::vector<int64_t> st = stridesOf(x.shape);
  const float *src = x.as<float>();
  float *dst = ctx.output(0).as<float>();
  std::vector<int64_t> idx(rank, 0);
  const size_t corners = size_t(1) << blend.size();
  do {
    int64_t base = 0;
    for (size_t d = 0; d < rank; ++d)
      base += maps[d].i0[idx[d]] * st[d];
    float acc = 0.0f;
    // Every corner of the blended dims, weighted by the product of theirs.
    for (size_t corner = 0; corner < corners; ++corner) {
      int64_t off = base;
      float wgt = 1.0f;
      for (size_t b = 0; b < blend.size(); ++b) {
        const AxisMap &m = maps[blend[b]];
        int64_t o = idx[blend[b]];
        if (corner >> b & 1) {
          off += (m.i1[o] - m.i0[o]) * st[blend[b]];
          wgt *= m.w1[o];
        } else {
          wgt *= 1.0f - m.w1[o];
        }
      }
      acc += wgt * src[off];
    }
    *dst++ = acc;
  } while (nextIndex(idx, out));
  return Status::ok();
}

} // namespace

void addResizeKernels(std::vector<KernelImpl> &table) {
  table.push_back({"resize", resizeKernel});
}

} // namespace ingot::cpu
