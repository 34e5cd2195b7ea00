//===- activation.cuh - silu_mul and gelu kernel templates ------*- C++ -*-===//
//
// The CUDA forms of the runtime's silu_mul and gelu (runtime/src/cpu/
// LlmActivation.cpp), with the same formulas, and the scalar activations
// that linear.cuh's epilogue shares with them (as the CPU linear shares
// the CPU kernels' functions), so that a fused epilogue and the separate
// kernel compute the same expression.
//
// Launch (both kernels): one thread per output element, block 256 (any
// size works; blockDim.x is read), grid.x = ceil(n / blockDim.x), where n
// is the number of output elements.
//
// exp and erfc are the accurate expf / erfcf (a few ulp), not __expf: the
// CPU's sigmoid is within ~2 ulp, and these kernels are bound by memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "prelude.cuh"

namespace ingot_k {

/// 1 / (1 + exp(-v)); 0 for v -> -inf (exp gives inf), 1 for v -> +inf.
INGOT_DEVICE float sigmoidF(float v) { return 1.0f / (1.0f + expf(-v)); }

/// silu_mul's gate factor, and linear's "silu": v * sigmoid(v).
INGOT_DEVICE float siluF(float v) { return v * sigmoidF(v); }

/// The exact gelu, as 0.5·v·erfc(−v/√2): erfc avoids the cancellation of
/// 1 + erf(v/√2) for negative v (the CPU kernel's form).
INGOT_DEVICE float geluErfF(float v) {
  const float kInvSqrt2 = 0.70710678118654752f;
  return 0.5f * v * erfcf(-v * kInvSqrt2);
}

/// The tanh gelu, 0.5·v·(1 + tanh u) with u = √(2/π)(v + 0.044715v³),
/// computed as v·sigmoid(2u) like the CPU kernel (no cancellation of
/// 1 + tanh u for negative u). The constants are 2·√(2/π) and
/// 2·√(2/π)·0.044715, in the CPU kernel's order of operations.
INGOT_DEVICE float geluTanhF(float v) {
  const float c1 = 1.5957691216057308f, c3 = 0.0713548162726f;
  return v * sigmoidF(v * (c1 + c3 * v * v));
}

/// linear's `activation` attribute as a template argument.
enum Act {
  kActNone = 0,
  kActRelu = 1,
  kActSilu = 2,
  kActGelu = 3,
  kActGeluTanh = 4
};

/// Applies activation ACT (an Act) to v.
template <int ACT> INGOT_DEVICE float activate(float v) {
  static_assert(ACT >= kActNone && ACT <= kActGeluTanh, "activation");
  if (ACT == kActRelu)
    return v < 0.0f ? 0.0f : v; // the relu kernel's expression: NaN stays
  if (ACT == kActSilu)
    return siluF(v);
  if (ACT == kActGelu)
    return geluErfF(v);
  if (ACT == kActGeluTanh)
    return geluTanhF(v);
  return v;
}

/// silu_mul: y[i] = g·sigmoid(g)·u, I being y's last dim (the compiler
/// knows it in both forms). With `up`, g = gate[i] and u = up[i]
/// (all of n elements). Without, gate is the merged projection [..., 2I],
/// each row gate then up, and y is [..., I]: g and u come from row i / I.
///
/// y may be gate or up itself (each thread reads its element before it
/// writes it). Unlike the CPU kernel, the one-input form must not write y
/// over gate: the CPU runs the rows in waves so that no row overwrites
/// input still to be read, but thread blocks run in no order, so y must
/// not overlap the packed input at all.
template <int I>
INGOT_DEVICE void siluMul(const float *gate, const float *up, float *y, i64 n) {
  static_assert(I > 0, "I is the output's last dim");
  const i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float g, u;
  if (up) {
    g = gate[i];
    u = up[i];
  } else {
    const i64 r = i / I, c = i - r * I;
    const float *row = gate + r * (2 * static_cast<i64>(I));
    g = row[c];
    u = row[I + c];
  }
  y[i] = siluF(g) * u;
}

/// The one-input silu_mul when the memory plan put y over the packed gate
/// (as the CPU kernel allows): one block walks the rows in order, reading a
/// whole row into registers before any thread writes. Row r's output
/// [rI, rI + I) only overlaps input rows <= r, all read by then. Launch:
/// grid.x = 1, block = BLOCK; `rows` = numel(y) / I.
template <int I, int BLOCK>
INGOT_DEVICE void siluMulPackedInPlace(const float *gate, float *y, i64 rows) {
  constexpr int PER = (I + BLOCK - 1) / BLOCK;
  for (i64 r = 0; r < rows; ++r) {
    const float *row = gate + r * (2 * static_cast<i64>(I));
    float v[PER];
    for (int j = 0; j < PER; ++j) {
      const int c = threadIdx.x + j * BLOCK;
      v[j] = c < I ? siluF(row[c]) * row[I + c] : 0.f;
    }
    syncBlock();
    for (int j = 0; j < PER; ++j) {
      const int c = threadIdx.x + j * BLOCK;
      if (c < I)
        y[r * I + c] = v[j];
    }
    syncBlock();
  }
}

/// gelu: y[i] = gelu(x[i]), the tanh form when TANH (approximate="tanh").
/// y may be x.
template <bool TANH> INGOT_DEVICE void gelu(const float *x, float *y, i64 n) {
  const i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  y[i] = TANH ? geluTanhF(x[i]) : geluErfF(x[i]);
}

} // namespace ingot_k
