//===- Activation.h - Activations shared by kernels -------------*- C++ -*-===//
//
// The activation of the `gelu` kernel as a plain function, so that linear's
// fused epilogue computes exactly the same bits as linear then gelu.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ingot::cpu {

/// y[i] = gelu(x[i]) as the `gelu` kernel computes it: the exact (erf)
/// form, or the tanh form when `tanhForm`. Each element depends on x[i]
/// alone, whatever n and the split into calls; y may equal x.
/// Defined in LlmActivation.cpp.
void geluF32(const float *x, float *y, int64_t n, bool tanhForm);

} // namespace ingot::cpu
