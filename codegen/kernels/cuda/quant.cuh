//===- quant.cuh - Linear and gather on block-quantised weights -*- C++ -*-===//
//
// The CUDA forms of the runtime's quantised linear (runtime/src/cpu/
// LinearQuant.cpp, "nk" layout only, as on the CPU) and quantised gather
// (gatherQuantRows in runtime/src/cpu/DataMovement.cpp) for the block
// formats q8, q4 and q4m of format/include/ingot/Quant.h: each row of K
// values is split into blocks of GROUP values (a shorter last block when
// K % GROUP != 0), each an f16 scale d (and, for q4m, an f16 minimum m)
// then the values; int4 values are packed per run of 32 (byte i of a run
// holds value i low and value i + ceil(t/2) high, t the run's length).
// Values decode exactly as dequantizeRow does: q8 d·q, q4 d·(q − 8), q4m
// fma(q, d, m); f8e4m3 is not handled here.
//
// linearQuant: y[m, N] = act(x[m, K]·Wᵀ + bias) + residual, in the CPU's
// order (bias added to the dot product, then the activation, then the
// residual; the bias is f32, bf16 or f16, widened as the CPU widens it).
// Launch: block = WARPS·32 threads, grid.x = ceil(N / WARPS), grid.y =
// ceil(m / MT). Warp w of block (bx, by) computes column n = bx·WARPS + w
// for rows [by·MT, by·MT + MT) ∩ [0, m), decoding its weight row once for
// all MT rows. Lane l takes values l, l + 32, ... of each block, blocks in
// K order, one fmaf per term into a per-row accumulator; warpSum's fixed
// butterfly combines the lanes; lane t finishes row t.
//
// Weight-only quantisation: x stays f32 and every term is x times the
// exactly dequantised weight, as on the CPU (LinearQuant.h explains why x
// is not quantised to int8 as llama.cpp does: on SmolLM2-135M that alone
// moved the logits by 22%). So the GPU result differs from the CPU's only
// by f32 rounding in another summation order (measured at most 4.2e-8 of
// Σ|x·w| for K = 576 and 1536), not by any activation-quantisation error.
//
// Batch invariance: a lane's K positions and their order depend only on
// K and GROUP (compile-time), rows never share accumulators, so a row's
// outputs are bitwise the same whatever m is and whichever tile it is in.
//
// embeddingRowsQuant: launch grid.x = number of ids, block = BLOCK
// threads; block t decodes row ids[t] into row t of y (f32), thread i
// taking columns i, i + BLOCK, ... (consecutive threads read neighbouring
// bytes). A negative id counts from the end; an id outside [-vocab, vocab)
// gives a quiet-NaN row (gather.cuh explains why, not an error).
//
// Block headers are read byte by byte: blocks of an odd byte count (e.g.
// q8 with an odd GROUP, or any short int4 block) leave later f16 scales
// unaligned.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "activation.cuh"
#include "linear.cuh"
#include "prelude.cuh"

namespace ingot_k {

enum class QFormat { Q8, Q4, Q4M };

/// Bytes of a block of G values (Quant.h's quantBlockBytes; a struct, not
/// a constexpr function, for the reason linear.cuh's VectorEnd gives).
template <QFormat F, int G> struct QBlockBytes {
  static constexpr int header = F == QFormat::Q4M ? 4 : 2;
  static constexpr int value =
      F == QFormat::Q8 ? header + G : header + G / 32 * 16 + (G % 32 + 1) / 2;
};

/// Bytes of a row of K values in blocks of GROUP (quantRowBytes).
template <QFormat F, int K, int GROUP> struct QRowBytes {
  static constexpr int kTail = K % GROUP, kTailG = kTail ? kTail : 1;
  static constexpr i64 value =
      static_cast<i64>(K / GROUP) * QBlockBytes<F, GROUP>::value +
      (kTail ? QBlockBytes<F, kTailG>::value : 0);
};

/// The f16 at p (little-endian, any alignment) widened to f32.
INGOT_DEVICE float loadHalfF32(const u8 *p) {
  return f16ToF32(static_cast<u16>(p[0] | (p[1] << 8)));
}

/// The stored integer of value j (0 <= j < g) of a block's payload, as
/// the f32 factor of d: int8 for q8, q − 8 for q4, q for q4m.
template <QFormat F>
INGOT_DEVICE float quantFactor(const u8 *payload, int j, int g) {
  if (F == QFormat::Q8)
    return static_cast<float>(static_cast<signed char>(payload[j]));
  const int r = j / 32, i = j % 32;
  const int t = g - r * 32 < 32 ? g - r * 32 : 32, h = (t + 1) / 2;
  const u8 b = payload[r * 16 + (i < h ? i : i - h)];
  const int q = i < h ? (b & 0x0f) : (b >> 4);
  return static_cast<float>(F == QFormat::Q4 ? q - 8 : q);
}

/// A factor times the block's scale, as dequantizeRow rounds it (q4m in
/// one fma, q8 and q4 in one product).
template <QFormat F>
INGOT_DEVICE float quantScale(float factor, float d, float m) {
  return F == QFormat::Q4M ? fmaf(factor, d, m) : d * factor;
}

/// Value j (0 <= j < g) of the block at blk holding g values, exactly
/// dequantizeRow's value for it.
template <QFormat F>
INGOT_DEVICE float quantValue(const u8 *blk, int j, int g) {
  const float d = loadHalfF32(blk);
  const float m = F == QFormat::Q4M ? loadHalfF32(blk + 2) : 0.0f;
  const u8 *payload = blk + QBlockBytes<F, 1>::header;
  return quantScale<F>(quantFactor<F>(payload, j, g), d, m);
}

/// Adds block blk's terms (g values, starting at K position k0) to the
/// accumulators of `rows` rows of x from xr: lane takes values lane,
/// lane + 32, ... in order. The scale is read once per block.
template <QFormat F, int K, int MT>
INGOT_DEVICE void dotBlock(const u8 *blk, int g, int k0, const float *xr,
                           int rows, int lane, float *acc) {
  const float d = loadHalfF32(blk);
  const float m = F == QFormat::Q4M ? loadHalfF32(blk + 2) : 0.0f;
  const u8 *payload = blk + QBlockBytes<F, 1>::header;
  for (int j = lane; j < g; j += kWarp) {
    const float wv = quantScale<F>(quantFactor<F>(payload, j, g), d, m);
    for (int t = 0; t < MT; ++t) {
      if (t >= rows)
        break;
      acc[t] = fmaf(xr[static_cast<i64>(t) * K + k0 + j], wv, acc[t]);
    }
  }
}

/// y = act(x·Wᵀ + bias) + residual with W [N, K] in format F (rows of
/// QRowBytes bytes). B is the bias's storage: float, Bf16 or F16. y may be
/// the residual's memory (each output is read, then written, by one lane).
template <int K, int N, QFormat F, int GROUP, int WARPS, int MT, int ACT,
          typename B = float>
INGOT_DEVICE void linearQuant(const float *x, const u8 *w, const B *bias,
                              const float *residual, float *y, i64 m) {
  static_assert(K > 0 && N > 0 && GROUP > 0, "shape");
  static_assert(WARPS > 0 && WARPS * kWarp <= 1024, "block size");
  static_assert(MT > 0 && MT <= kWarp, "lane t writes row t of a tile");
  constexpr int kFull = K / GROUP, kTail = K % GROUP;
  constexpr int kBlock = QBlockBytes<F, GROUP>::value;

  const int lane = threadIdx.x % kWarp;
  const int n = blockIdx.x * WARPS + threadIdx.x / kWarp;
  if (n >= N)
    return; // the whole warp leaves; nothing below synchronises the block
  const i64 r0 = static_cast<i64>(blockIdx.y) * MT;
  const int rows = m - r0 < MT ? static_cast<int>(m - r0) : MT;
  const u8 *row = w + static_cast<i64>(n) * QRowBytes<F, K, GROUP>::value;
  const float *xr = x + r0 * K;

  float acc[MT];
  for (int t = 0; t < MT; ++t)
    acc[t] = 0.0f;
  for (int b = 0; b < kFull; ++b)
    dotBlock<F, K, MT>(row + static_cast<i64>(b) * kBlock, GROUP, b * GROUP, xr,
                       rows, lane, acc);
  if (kTail)
    dotBlock<F, K, MT>(row + static_cast<i64>(kFull) * kBlock, kTail,
                       kFull * GROUP, xr, rows, lane, acc);

  // As linear.cuh: `rows` is warp-uniform, so every lane joins the same
  // shuffles; lane t keeps row t's total and runs its epilogue.
  linearEpilogue<N, MT, ACT>(acc, rows, lane, r0, n, bias, residual, y);
}

/// y[t, :] = the f32 values of row ids[t] of a quantised [vocab, D] table
/// (rows of QRowBytes<F, D, GROUP> bytes); Index is i64 or i32.
template <int D, int BLOCK, QFormat F, int GROUP, typename Index>
INGOT_DEVICE void embeddingRowsQuant(const u8 *table, const Index *ids,
                                     float *y, i64 vocab) {
  static_assert(D > 0 && BLOCK > 0 && GROUP > 0, "shape");
  constexpr int kFull = D / GROUP, kTail = D % GROUP;
  constexpr int kBlock = QBlockBytes<F, GROUP>::value;
  const i64 t = blockIdx.x;
  float *out = y + t * D;
  i64 id = static_cast<i64>(ids[t]);
  if (id < 0)
    id += vocab;
  if (id < 0 || id >= vocab) {
    const float qnan = __uint_as_float(0x7fc00000u);
    for (int c = threadIdx.x; c < D; c += BLOCK)
      out[c] = qnan;
    return;
  }
  const u8 *row = table + id * QRowBytes<F, D, GROUP>::value;
  for (int c = threadIdx.x; c < D; c += BLOCK) {
    const int b = c / GROUP;
    const int g = b < kFull ? GROUP : kTail;
    out[c] =
        quantValue<F>(row + static_cast<i64>(b) * kBlock, c - b * GROUP, g);
  }
}

} // namespace ingot_k
