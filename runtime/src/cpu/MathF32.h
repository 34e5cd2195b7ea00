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
/// y[i] = tanh(x[i]), within ~3 ulp (a polynomial below |x| = 0.625).
void tanhF32(const float *x, float *y, int64_t n);

/// The same with a forced ISA, for tests; it must be supported
/// (gemmIsaSupported).
void expF32(GemmIsa isa, const float *x, float shift, float *y, int64_t n);
void sigmoidF32(GemmIsa isa, const float *x, float *y, int64_t n);
void tanhF32(GemmIsa isa, const float *x, float *y, int64_t n);

} // namespace ingot::cpu
