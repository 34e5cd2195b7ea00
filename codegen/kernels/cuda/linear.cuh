//===- linear.cuh - linear: act(x W^T + bias) + residual --------*- C++ -*-===//
//
// The CUDA form of the runtime's linear (runtime/src/cpu/Linear.cpp) for
// f32, bf16 and f16 weights: y[m, N] = act(x[m, K]·Wᵀ + bias) + residual,
// W logically [N, K] and stored "nk" (row-major [N, K]), "kn" (row-major
// [K, N]) or "nk16" (16-row panels, format/include/ingot/WeightLayout.h).
// The order is the CPU's: bias is added to the dot product, then the
// activation, then the residual. This is the decode GEMV and a correct,
// not tensor-core, prefill path.
//
// Launch: block = WARPS·32 threads, grid.x = ceil(N / WARPS), grid.y =
// ceil(m / MT). Warp w of block (bx, by) computes column n = bx·WARPS + w
// for rows [by·MT, by·MT + MT) ∩ [0, m): it reads its weight row once for
// all MT rows (MT <= 32). Its lanes split K, each accumulating MT sums; a
// butterfly gives every lane the totals, and lane t writes row t's output.
//
// Batch invariance: every output's sum is computed in an order that
// depends only on K (and the layout and weight dtype, all compile-time):
// lane l takes the same K positions in the same order whatever m is and
// whichever row tile or block the row falls in, rows never share
// accumulators, each term is one fmaf, and the lanes are combined by the
// fixed butterfly of warpSum. So a row's output is bitwise the same
// whatever the other rows of the step are, as the CPU kernel guarantees.
// (It is not bitwise the CPU's: the CPU sums in a different order.)
//
// Loads: weights move in 128-bit vectors (4 f32 or 8 16-bit values)
// wherever the layout keeps them 16-byte aligned: "nk" when K is a
// multiple of the vector width (else every row start would be misaligned
// for some rows, and the whole row is read in scalars); "nk16" for its
// whole 64-byte chunks always and for the row's K tail when K is a
// multiple of the width. x moves in 128-bit vectors when K % 4 == 0 (its
// rows are then aligned). "kn" is read in scalars, one strided element
// per lane: correct, but uncoalesced; "nk"/"nk16" are the fast layouts.
// The pointers must be 16-byte aligned (allocations are 256-aligned).
//
// y may be the residual's memory: each output is read as residual and
// written by the same lane.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "activation.cuh"
#include "prelude.cuh"

namespace ingot_k {

enum class WLayout { Nk, Kn, Nk16 };

/// 16 bytes as one load (the layout of CUDA's uint4).
struct alignas(16) Vec16 {
  u32 w[4];
};

/// A 128-bit load; p must be 16-byte aligned.
INGOT_DEVICE Vec16 load16(const void *p) {
  return *reinterpret_cast<const Vec16 *>(p);
}

/// The values of a Vec16 of weights widened to f32, in memory order
/// (the low half of a word is the lower address, little-endian).
INGOT_DEVICE void widenVec(const Vec16 &v, const float *, float *out) {
  for (int i = 0; i < 4; ++i)
    out[i] = __uint_as_float(v.w[i]);
}
INGOT_DEVICE void widenVec(const Vec16 &v, const Bf16 *, float *out) {
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = bf16ToF32(static_cast<u16>(v.w[i] & 0xffffu));
    out[2 * i + 1] = bf16ToF32(static_cast<u16>(v.w[i] >> 16));
  }
}
INGOT_DEVICE void widenVec(const Vec16 &v, const F16 *, float *out) {
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = f16ToF32(static_cast<u16>(v.w[i] & 0xffffu));
    out[2 * i + 1] = f16ToF32(static_cast<u16>(v.w[i] >> 16));
  }
}

/// Offset in elements of W(n, k) in layout L, for elements of ES bytes.
/// "nk16" is WeightLayout.h's nk16Index with its constants: panels of 16
/// rows, 64-byte chunks of K, then each row's K % chunk tail.
template <int K, int N, int ES, WLayout L>
INGOT_DEVICE i64 weightOffset(int n, int k) {
  if (L == WLayout::Kn)
    return static_cast<i64>(k) * N + n;
  if (L == WLayout::Nk)
    return static_cast<i64>(n) * K + k;
  constexpr int kPanel = 16, kChunk = 64 / ES, kFull = K / kChunk * kChunk;
  const int p0 = n / kPanel * kPanel;
  const int rows = N - p0 < kPanel ? N - p0 : kPanel, r = n - p0;
  const i64 at = static_cast<i64>(p0) * K; // p0 full rows precede the panel
  if (k < kFull)
    return at + static_cast<i64>(k / kChunk) * rows * kChunk + r * kChunk +
           k % kChunk;
  return at + static_cast<i64>(kFull) * rows + r * (K - kFull) + (k - kFull);
}

/// How far from 0 the vector loop of a layout goes: [0, value) is read
/// in 128-bit weight vectors, [value, K) in scalars. (A struct, not a
/// constexpr function: those are host-only in device code without
/// --expt-relaxed-constexpr.)
template <int K, int ES, WLayout L> struct VectorEnd {
  static constexpr int value = L == WLayout::Kn     ? 0
                               : K % (16 / ES) == 0 ? K
                               : L == WLayout::Nk16 ? K / (64 / ES) * (64 / ES)
                                                    : 0;
};

/// The end of a linear warp: the MT row sums reduced over the warp (every
/// lane joins each shuffle, `rows` being warp-uniform), then lane t adds
/// row t's bias, activation and residual and writes y. Shared by the float
/// and the quantised linear (quant.cuh).
template <int N, int MT, int ACT, typename B>
INGOT_DEVICE void linearEpilogue(const float (&acc)[MT], int rows, int lane,
                                 i64 r0, i64 n, const B *bias,
                                 const float *residual, float *y) {
  float mine = 0.0f;
  for (int t = 0; t < MT; ++t) {
    if (t >= rows)
      break;
    const float s = warpSum(acc[t]);
    if (lane == t)
      mine = s;
  }
  if (lane >= rows)
    return;
  const i64 o = (r0 + lane) * N + n;
  if (bias)
    mine = mine + widen(bias[n]);
  mine = activate<ACT>(mine);
  if (residual)
    mine = mine + residual[o]; // read before y[o], which may be the same
  y[o] = mine;
}

template <int K, int N, typename W, WLayout L, int WARPS, int MT, int ACT>
INGOT_DEVICE void linear(const float *x, const W *w, const W *bias,
                         const float *residual, float *y, i64 m) {
  static_assert(sizeof(W) == 4 || sizeof(W) == 2, "f32, Bf16 or F16");
  static_assert(K > 0 && N > 0 && WARPS > 0 && WARPS * kWarp <= 1024, "shape");
  static_assert(MT > 0 && MT <= kWarp, "lane t writes row t of a tile");
  constexpr int kEs = sizeof(W), kVec = 16 / kEs;
  constexpr int kVecEnd = VectorEnd<K, kEs, L>::value;
  constexpr bool kXVec = K % 4 == 0; // x rows are 16-byte aligned

  const int lane = threadIdx.x % kWarp;
  const int n = blockIdx.x * WARPS + threadIdx.x / kWarp;
  if (n >= N)
    return; // the whole warp leaves; nothing below synchronises the block
  const i64 r0 = static_cast<i64>(blockIdx.y) * MT;
  const int rows = m - r0 < MT ? static_cast<int>(m - r0) : MT;

  float acc[MT];
  for (int t = 0; t < MT; ++t)
    acc[t] = 0.0f;
  // Vector part: lane l takes vectors l, l + 32, ...; terms in K order.
  for (int k = lane * kVec; k < kVecEnd; k += kWarp * kVec) {
    float wf[kVec];
    widenVec(load16(w + weightOffset<K, N, kEs, L>(n, k)), w, wf);
    for (int t = 0; t < MT; ++t) {
      if (t >= rows)
        break;
      const float *xr = x + (r0 + t) * K + k;
      float xf[kVec];
      for (int j = 0; j < kVec; j += 4) {
        if (kXVec) {
          widenVec(load16(xr + j), xr, xf + j);
        } else {
          for (int q = 0; q < 4; ++q)
            xf[j + q] = xr[j + q];
        }
      }
      for (int j = 0; j < kVec; ++j)
        acc[t] = fmaf(xf[j], wf[j], acc[t]);
    }
  }
  // Scalar part: lane l takes K positions kVecEnd + l, + 32, ...
  for (int k = kVecEnd + lane; k < K; k += kWarp) {
    const float wv = widen(w[weightOffset<K, N, kEs, L>(n, k)]);
    for (int t = 0; t < MT; ++t) {
      if (t >= rows)
        break;
      acc[t] = fmaf(x[(r0 + t) * K + k], wv, acc[t]);
    }
  }

  // `rows` is the same for the whole warp, so every lane (as the full-mask
  // shuffles need) reduces the same rows; a partial tile skips the rest.
  // Lane t keeps row t's total and runs its epilogue, so the MT epilogues
  // run side by side. (Loops run to MT, a constant, and break: they
  // unroll, and acc stays in registers.)
  linearEpilogue<N, MT, ACT>(acc, rows, lane, r0, n, bias, residual, y);
}

} // namespace ingot_k
