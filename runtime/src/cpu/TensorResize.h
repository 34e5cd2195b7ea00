//===- TensorResize.h - Shared by the resize kernel files ------*- C++ -*-===//
//
// Private to TensorResize.cpp and TensorResizeCubic.cpp: the coordinate
// mapping every mode shares and tf_crop_and_resize's region.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/TensorKernels.h"

#include <string>
#include <vector>

namespace ingot::cpu {

/// tf_crop_and_resize's region per dim (starts then ends, as fractions of
/// the input) and the value of outputs whose coordinate leaves the input.
struct Crop {
  std::vector<float> roi; // empty: another coordinate mode
  float extrapolation = 0.0f;
  bool any(const std::vector<uint8_t> &outside, int64_t o) const {
    return !outside.empty() && outside[size_t(o)];
  }
};

/// Source coordinate of output index `o`. `outLen` is the real output
/// length in (in · scale when scales were given, unfloored, as the ONNX
/// reference uses it), `outInt` the integer one.
inline float sourceCoord(int64_t o, float scale, int64_t inLen, float outLen,
                         int64_t outInt, const std::string &ctm,
                         float roiStart = 0, float roiEnd = 1) {
  if (ctm == "tf_crop_and_resize") {
    const float span = (roiEnd - roiStart) * float(inLen - 1);
    const float at = outLen == 1.0f ? span / 2 : float(o) * span / (outLen - 1);
    return at + roiStart * float(inLen - 1);
  }
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

inline float roiStart(const Crop &crop, size_t d) {
  return crop.roi.empty() ? 0.0f : crop.roi[d];
}
inline float roiEnd(const Crop &crop, size_t d, size_t rank) {
  return crop.roi.empty() ? 1.0f : crop.roi[d + rank];
}

/// Keys' coefficient (cubic_coeff_a, default -0.75) and exclude_outside.
inline Status cubicAttrs(const KernelContext &ctx, float *a,
                         bool *excludeOutside) {
  double coeff;
  int64_t exclude;
  if (Status s = ctx.attrFloat("cubic_coeff_a", &coeff, -0.75); !s)
    return s;
  if (Status s = ctx.attrInt("exclude_outside", &exclude, 0); !s)
    return s;
  *a = float(coeff), *excludeOutside = exclude != 0;
  return Status::ok();
}

/// Cubic resize of input 0 into `out` (TensorResizeCubic.cpp).
Status resizeCubic(KernelContext &ctx, const std::vector<double> &scales,
                   const std::vector<float> &scale, const shape::Shape &out,
                   const std::string &ctm, const Crop &crop);

/// Linear or cubic resize with antialias = 1, one 1-D pass per resized dim
/// (TensorResizeAntialias.cpp).
Status resizeAntialias(KernelContext &ctx, const std::vector<double> &scales,
                       const std::vector<float> &scale, const shape::Shape &out,
                       const std::string &ctm, bool cubic);

} // namespace ingot::cpu
