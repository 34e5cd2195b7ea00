//===- norm.cuh - rms_norm and add_rms_norm kernel template -----*- C++ -*-===//
//
// The CUDA form of the runtime's rms_norm and add_rms_norm (runtime/src/
// cpu/LlmNorm.cpp): y = s / sqrt(mean(s²) + eps) · weight over rows of H
// values, where s is the row of a (rms_norm) or a + b (add_rms_norm, which
// also writes s to `sum`, the pre-norm residual stream).
//
// Launch: grid.x = number of rows (numel / H), block = BLOCK threads (a
// multiple of 32, at most 1024). Block r normalises row r; thread t owns
// columns t, t + BLOCK, ... and keeps them in registers between the
// reduction and the scaling.
//
// Numerics: the CPU reduces the sum of squares in double and forms the
// scale in double; here it is f32 (per-thread FMAs, then a fixed butterfly
// and block sum), a relative error of a few f32 ulp for the row lengths of
// a model. The order depends only on H and BLOCK, so a row's result does
// not depend on the other rows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "prelude.cuh"

namespace ingot_k {

/// rms_norm (b == nullptr; sum is then unused) or add_rms_norm (sum = a + b,
/// y = rms_norm(sum)). W is float, Bf16 or F16.
///
/// In place: the memory planner may put sum over a and y over b (or the
/// other way round), as the CPU kernel allows. Every thread loads all its
/// values of a and b into registers before it stores anything, and only
/// ever stores to the columns it loaded, so any such aliasing is safe.
template <int H, int BLOCK, typename W>
INGOT_DEVICE void rmsNorm(const float *a, const float *b, const W *weight,
                          float *sum, float *y, float eps) {
  static_assert(H > 0, "row length");
  static_assert(BLOCK % kWarp == 0 && BLOCK <= 1024, "block size");
  constexpr int kPer = (H + BLOCK - 1) / BLOCK; // columns per thread
  INGOT_SHARED float scratch[BLOCK / kWarp];

  const i64 row = static_cast<i64>(blockIdx.x) * H;
  const int t = static_cast<int>(threadIdx.x);
  float v[kPer];
  for (int i = 0; i < kPer; ++i) {
    const int c = t + i * BLOCK;
    // Columns past H hold 0, which adds nothing to the sum of squares.
    v[i] = 0.0f;
    if (c < H)
      v[i] = b ? a[row + c] + b[row + c] : a[row + c];
  }
  float sq = 0.0f;
  for (int i = 0; i < kPer; ++i)
    sq = fmaf(v[i], v[i], sq);
  // Every thread reaches the reduction (no early return above).
  const float total = blockSum<BLOCK>(sq, scratch);
  const float inv = rsqrtF(total / static_cast<float>(H) + eps);
  for (int i = 0; i < kPer; ++i) {
    const int c = t + i * BLOCK;
    if (c >= H)
      continue;
    if (b)
      sum[row + c] = v[i];
    // The CPU's expression: (s · inv) · weight.
    y[row + c] = v[i] * inv * widen(weight[c]);
  }
}

} // namespace ingot_k
