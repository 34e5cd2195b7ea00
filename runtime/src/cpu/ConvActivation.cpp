//===- ConvActivation.cpp - what a conv applies after its bias ------------===//
#include "cpu/ConvWindow.h"

namespace ingot::cpu {
namespace {

/// leaky_relu (when `leaky`) then the clamp, each as the unfused kernel
/// computes it: x < 0 ? alpha·x : x, then Max and Min by a constant with
/// the tensor first (a NaN compares false and stays). One pass, cloned per
/// ISA so the selects vectorise.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
leakyClamp(float *y, int64_t len, bool leaky, float alpha, float lo, float hi) {
  if (leaky)
    for (int64_t i = 0; i < len; ++i) {
      float v = y[i] < 0 ? alpha * y[i] : y[i];
      v = v < lo ? lo : v;
      y[i] = hi < v ? hi : v;
    }
  else
    for (int64_t i = 0; i < len; ++i) {
      const float v = y[i] < lo ? lo : y[i];
      y[i] = hi < v ? hi : v;
    }
}

/// y += r, a plain loop the ISA clones vectorise (the add kernel's sum).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
addResidual(float *y, const float *r, int64_t len) {
  for (int64_t i = 0; i < len; ++i)
    y[i] += r[i];
}

/// `name` as a float when the conv has it.
Status optionalFloat(const KernelContext &ctx, const char *name, float *out) {
  if (!ctx.findAttr(name))
    return Status::ok();
  double v = 0;
  if (Status s = ctx.attrFloat(name, &v); !s)
    return s;
  *out = float(v);
  return Status::ok();
}

} // namespace

void ConvActivation::apply(float *y, int64_t len) const {
  linear::activate(act, y, len);
  if (leaky || clamps())
    leakyClamp(y, len, leaky, alpha, lo, hi);
  if (residual)
    addResidual(y, residual + (y - outputBase), len);
}

Status parseConvActivation(KernelContext &ctx, ConvActivation *act) {
  std::string name;
  if (Status s = ctx.attrStr("activation", &name, std::string("none")); !s)
    return s;
  if (name == "leaky_relu") {
    double alpha = 0;
    if (Status s = ctx.attrFloat("activation_alpha", &alpha); !s)
      return s;
    act->leaky = true, act->alpha = float(alpha);
  } else if (Status s = linear::parseActivation(ctx, &act->act); !s) {
    return s;
  }
  if (Status s = optionalFloat(ctx, "clip_min", &act->lo); !s)
    return s;
  return optionalFloat(ctx, "clip_max", &act->hi);
}

} // namespace ingot::cpu
