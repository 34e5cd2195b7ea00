//===- MathF32.h - Vectorised f32 transcendentals ---------------*- C++ -*-===//
//
// Array forms of exp, sigmoid and tanh, vectorised for the best ISA of this
// CPU; within ~2 ulp of the exact result, with inf/0/NaN handled as expf does.
// In-place use (y == x) is fine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/Gemm.h"

#include <cstdint>

namespace ingot::cpu {

/// y[i] = exp(x[i] - shift); `shift` lets softmax subtract its row max.
void expF32(const float *x, float shift, float *y, int64_t n);
/// y[i] = 1 / (1 + exp(-x[i])).
void sigmoidF32(const float *x, float *y, int64_t n);
/// y[i] = x[i] * sigmoidF32(x[i]), in one pass with the same bits.
void siluF32(const float *x, float *y, int64_t n);
/// y[i] = tanh(x[i]), within ~3 ulp (a polynomial below |x| = 0.625).
void tanhF32(const float *x, float *y, int64_t n);
/// y[i] = erf(x[i]), within 2e-7 of the exact value (4e-7 relative).
void erfF32(const float *x, float *y, int64_t n);
/// y[i] = erfc(x[i]) = 1 - erf(x[i]), keeping its relative precision for
/// x above 0.5 (no cancellation) and within 2e-7 elsewhere.
void erfcF32(const float *x, float *y, int64_t n);
/// GELU's exact form x·erfc(−x/√2)/2 in one pass: within 1e-6 relative
/// (5e-7 measured) for x >= 0, and for x < 0 within the relative bound
/// erfcF32 keeps (its tail's precision, not its bits). A value's bits do
/// not depend on where it lies in x.
void geluErfF32(const float *x, float *y, int64_t n);

/// Round half to even (std::nearbyint in the default rounding mode)
/// without a libm call, so loops over it vectorise: |v| + 2^23 lands where
/// floats are 1 apart, so the sum rounds |v| to the nearest even integer;
/// |v| >= 2^23 is an integer already (returned as is, as is NaN), and the
/// result takes v's sign (nearbyint(-0.3) is -0).
inline float roundHalfEven(float v) {
  constexpr float kTwo23 = 8388608.0f;
  const float a = __builtin_fabsf(v);
  const float r = __builtin_copysignf((a + kTwo23) - kTwo23, v);
  return a < kTwo23 ? r : v;
}

/// The same with a forced ISA, for tests; it must be supported
/// (gemmIsaSupported).
void expF32(GemmIsa isa, const float *x, float shift, float *y, int64_t n);
void sigmoidF32(GemmIsa isa, const float *x, float *y, int64_t n);
void tanhF32(GemmIsa isa, const float *x, float *y, int64_t n);
void geluErfF32(GemmIsa isa, const float *x, float *y, int64_t n);

} // namespace ingot::cpu
