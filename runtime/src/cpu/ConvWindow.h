//===- ConvWindow.h - Window geometry of conv and pooling -------*- C++ -*-===//
//
// Private to the conv and pooling kernels: the spatial window they all
// walk (strides, dilations, pads, output dims), with 1-D and 2-D windows as
// 3-D ones with unit leading dims, so one loop nest serves every rank.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/LinearBlocks.h"
#include "cpu/TensorKernels.h"

#include <algorithm>
#include <limits>

namespace ingot::cpu {

/// What a conv applies to each output value after its bias: linear's
/// activation, or leaky_relu with its slope, then the clamp to [lo, hi]
/// (Max then Min by a constant; -inf and +inf when absent). Each step is
/// the unfused kernel's expression, so the bits are the same.
struct ConvActivation {
  linear::Act act = linear::Act::None;
  bool leaky = false;
  float alpha = 0.0f;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  /// The residual added last, laid out as the output that starts at
  /// `outputBase`: y[i] gets residual[&y[i] - outputBase].
  const float *residual = nullptr;
  const float *outputBase = nullptr;
  bool clamps() const {
    return lo != -std::numeric_limits<float>::infinity() ||
           hi != std::numeric_limits<float>::infinity();
  }
  bool any() const {
    return act != linear::Act::None || leaky || clamps() || residual;
  }
  /// y[i] = activation(y[i]) (+ the residual) over `len` values
  /// (ConvActivation.cpp).
  void apply(float *y, int64_t len) const;
};

/// The conv's `activation`, `activation_alpha`, `clip_min` and `clip_max`.
Status parseConvActivation(KernelContext &ctx, ConvActivation *act);

/// Up to three spatial dims (D, H, W); 1-D and 2-D windows are 3-D ones
/// with unit leading dims, so one loop nest serves all ranks.
constexpr int kSpatial = 3;

struct Window {
  int64_t in[kSpatial], k[kSpatial], stride[kSpatial], dil[kSpatial],
      pad[kSpatial], padEnd[kSpatial], out[kSpatial];
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
};

/// Reads strides/pads/dilations/auto_pad and computes the output dims;
/// `kernel` holds the window size per spatial dim (1 to 3 of them).
inline Status planWindow(const KernelContext &ctx, const shape::Shape &x,
                         const std::vector<int64_t> &kernel, bool ceilMode,
                         Window *w) {
  const size_t nd = kernel.size();
  if (x.size() != nd + 2 || nd < 1 || nd > kSpatial)
    return ctx.error("expects [N, C, d1 (, d2 (, d3))] input with one "
                     "kernel dim per spatial dim");
  std::vector<int64_t> strides, pads, dil;
  std::string autoPad;
  if (Status s = ctx.attrInts("strides", &strides, std::vector<int64_t>(nd, 1));
      !s)
    return s;
  if (Status s = ctx.attrInts("pads", &pads, std::vector<int64_t>(2 * nd, 0));
      !s)
    return s;
  if (Status s = ctx.attrInts("dilations", &dil, std::vector<int64_t>(nd, 1));
      !s)
    return s;
  if (Status s = ctx.attrStr("auto_pad", &autoPad, "NOTSET"); !s)
    return s;
  if (strides.size() != nd || dil.size() != nd || pads.size() != 2 * nd)
    return ctx.error("strides/dilations/pads do not match the spatial rank");
  const size_t off = kSpatial - nd;
  for (size_t i = 0; i < kSpatial; ++i) {
    w->in[i] = 1, w->k[i] = 1, w->stride[i] = 1, w->dil[i] = 1, w->pad[i] = 0;
    w->padEnd[i] = 0;
    w->out[i] = 1;
  }
  for (size_t i = 0; i < nd; ++i) {
    size_t j = i + off;
    w->in[j] = x[i + 2];
    w->k[j] = kernel[i];
    w->stride[j] = strides[i];
    w->dil[j] = dil[i];
    w->pad[j] = pads[i];
    w->padEnd[j] = pads[i + nd];
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1)
      return ctx.error("kernel, strides and dilations must be positive");
    w->out[j] = windowOut(x[i + 2], kernel[i], strides[i], dil[i], &w->pad[j],
                          &w->padEnd[j], autoPad, ceilMode);
  }
  return Status::ok();
}

/// What conv and conv_integer read from x [N, C, spatial...] and the
/// weight [M, C/group, k...]: checked against group and kernel_shape.
struct ConvGeometry {
  int64_t n = 0, c = 0, m = 0, group = 1;
  size_t spatialRank = 0;
  Window w;
};

inline Status planConv(const KernelContext &ctx, ConvGeometry *g) {
  const KernelInput &x = ctx.input(0), &wt = ctx.input(1);
  if (Status s = ctx.attrInt("group", &g->group, 1); !s)
    return s;
  if (wt.shape.size() != x.shape.size() || x.shape.size() < 3)
    return ctx.error("weight and input ranks differ");
  g->n = x.shape[0], g->c = x.shape[1], g->m = wt.shape[0];
  const int64_t group = g->group;
  if (group < 1 || g->c % group || g->m % group || wt.shape[1] * group != g->c)
    return ctx.error("channels " + std::to_string(g->c) + " and weight " +
                     shape::toString(wt.shape) + " do not fit group " +
                     std::to_string(group));
  std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
  std::vector<int64_t> declared;
  if (Status s = ctx.attrInts("kernel_shape", &declared, kernel); !s)
    return s;
  if (declared != kernel)
    return ctx.error("weight " + shape::toString(wt.shape) +
                     " does not match kernel_shape " +
                     shape::toString(declared));
  g->spatialRank = kernel.size();
  return planWindow(ctx, x.shape, kernel, false, &g->w);
}

/// Output dims: N, C (or M) and the real spatial dims.
inline shape::Shape outputShape(int64_t n, int64_t c, size_t nd,
                                const Window &w) {
  shape::Shape out = {n, c};
  for (size_t i = kSpatial - nd; i < kSpatial; ++i)
    out.push_back(w.out[i]);
  return out;
}

/// Moves a trailing spatial dim of one element (an [N, C, H, 1] image
/// convolved by an [M, C, kh, 1] kernel, as TensorFlow exports 1-D convs)
/// out of the innermost place, so the loops that walk the last dim run
/// along H instead of once per element. Taps keep their order: a unit
/// dim contributes index 0 on both sides.
inline void hoistUnitInnerDims(Window &w) {
  for (int moved = 0; moved < kSpatial - 1; ++moved) {
    if (w.in[2] != 1 || w.k[2] != 1 || w.out[2] != 1 || w.pad[2] != 0 ||
        w.padEnd[2] != 0 || (w.in[1] == 1 && w.k[1] == 1 && w.out[1] == 1))
      return;
    for (int64_t *f : {w.in, w.k, w.stride, w.dil, w.pad, w.padEnd, w.out}) {
      f[2] = f[1];
      f[1] = f[0];
    }
    w.in[0] = w.k[0] = w.stride[0] = w.dil[0] = w.out[0] = 1;
    w.pad[0] = w.padEnd[0] = 0;
  }
}

/// Source index of output position o at kernel tap t along spatial dim d,
/// or -1 when it falls in the padding.
inline int64_t tapSource(const Window &w, int d, int64_t o, int64_t t) {
  int64_t i = o * w.stride[d] - w.pad[d] + t * w.dil[d];
  return i >= 0 && i < w.in[d] ? i : -1;
}

/// Output positions [lo, hi) along spatial dim d whose tap t reads inside
/// the input (the others read padding).
inline void validRange(const Window &w, int d, int64_t t, int64_t *lo,
                       int64_t *hi) {
  const int64_t s = w.stride[d], shift = t * w.dil[d] - w.pad[d];
  // i = o * s + shift must lie in [0, in).
  *lo = shift >= 0 ? 0 : (-shift + s - 1) / s;
  const int64_t last = w.in[d] - 1 - shift;
  *hi = last < 0 ? 0 : std::min(w.out[d], last / s + 1);
  *lo = std::min(*lo, *hi);
}

/// A depthwise conv (C/g = 1, any channel multiplier) of n images into y,
/// its bias added and `act` applied (ConvDepthwise.cpp).
void depthwiseConv(KernelContext &ctx, const Window &w, int64_t n, int64_t c,
                   int64_t m, const ConvActivation &act, float *y);

} // namespace ingot::cpu
