//===- LinearEpilogue.cpp - Activations fused into the linear kernel ----===//
//
// The activations are the separate kernels' own functions (gelu:
// cpu/Activation.h, silu: x·sigmoidF32(x) as silu_mul, relu as the relu
// kernel), elementwise, so fused and unfused agree bitwise.
//
//===----------------------------------------------------------------------===//

#include "cpu/Activation.h"
#include "cpu/LinearBlocks.h"
#include "cpu/MathF32.h"

#include <string>
#include <utility>

namespace ingot::cpu::linear {

namespace {

/// The exported chain's own operations in its order, x·clip(x + 3, 0, 6)
/// / 6, each rounded as the unfused ops round it (NaN propagates). Cloned
/// per ISA: the baseline's 4 lanes made it a sixth of PP-OCR's run.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
hardSwish(float *y, int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    float t = y[i] + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    t = 6.0f < t ? 6.0f : t;
    y[i] = y[i] * t / 6.0f;
  }
}

} // namespace

void activate(Act act, float *y, int64_t len) {
  switch (act) {
  case Act::None:
    return;
  case Act::Relu:
    // The relu kernel's expression (NaN propagates).
    for (int64_t i = 0; i < len; ++i)
      y[i] = y[i] < 0.0f ? 0.0f : y[i];
    return;
  case Act::Silu:
    // silu_mul's gate factor, g * sigmoid(g), in one vector pass.
    return siluF32(y, y, len);
  case Act::Gelu:
  case Act::GeluTanh:
    geluF32(y, y, len, act == Act::GeluTanh);
    return;
  case Act::HardSwish:
    return hardSwish(y, len);
  }
}

Status parseActivation(KernelContext &ctx, Act *act) {
  std::string s;
  if (Status st = ctx.attrStr("activation", &s, std::string("none")); !st)
    return st;
  static const std::pair<const char *, Act> kNames[] = {
      {"none", Act::None},          {"relu", Act::Relu},
      {"silu", Act::Silu},          {"gelu", Act::Gelu},
      {"gelu_tanh", Act::GeluTanh}, {"hard_swish", Act::HardSwish}};
  for (auto [name, a] : kNames)
    if (s == name) {
      *act = a;
      return Status::ok();
    }
  return ctx.error("activation must be none, relu, silu, gelu, gelu_tanh or "
                   "hard_swish, got \"" +
                   s + "\"");
}

} // namespace ingot::cpu::linear
