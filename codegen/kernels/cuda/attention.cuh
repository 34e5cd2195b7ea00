//===- attention.cuh - Paged attention over an f32 KV cache -----*- C++ -*-===//
//
// The CUDA counterpart of paged_attention and rope_paged_attention
// (runtime/src/cpu/PagedAttention.cpp), as two kernels per step, because
// every query of a prefill step must see the K/V of all earlier tokens of
// the same step, and a grid has no barrier between its blocks:
//
//   pagedKvWrite    grid.x = tokens, block 128 (any multiple of 32).
//                   Token t's K rows (rotated when ROTARY_DIM > 0) and V
//                   rows, all KV heads, go to cache slot slots[t].
//   pagedAttention  grid.x = HEADS, grid.y = tokens (<= 65535),
//                   block WARPS * 32. One block per (query head, token):
//                   the token's window of keys [windowStart(p), p] of its
//                   own sequence is split among the warps, each keeps a
//                   flash-decoding online softmax (running max, running
//                   sum, HEAD_DIM accumulators spread over the lanes), and
//                   the warps' partials are merged through shared memory.
//
// Semantics follow the CPU: query head h reads KV head h / (HEADS /
// KV_HEADS); token t belongs to the sequence s with queryEnds[s - 1] <= t
// < queryEnds[s] and attends to the cache positions j of that sequence with
// max(0, p - window + 1) <= j <= p (window 0: from 0), p = positions[t],
// read through row s of the block table; score = scale * (q . k), then
// softcap * tanh(score / softcap) when softcap > 0; out row t, head h is
// softmax(scores) . V. Sums are f32 in a different order than the CPU's
// (which cuts windows into 256-position chunks and sums exps in double), so
// results agree to rounding, not bitwise.
//
// Only the f32 cache. Unlike the CPU, which writes tokens serially (the
// later of two tokens naming one slot wins), pagedKvWrite writes all tokens
// at once: two tokens of a step must not share a slot. A negative slot is
// skipped (the CPU refuses the step).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "prelude.cuh"
#include "rope.cuh"

namespace ingot_k {

/// The runtime-known geometry of a step; a POD the host passes by value.
struct AttnArgs {
  // Cache layout (KvCacheView): KV head kvh's row of the token at offset o
  // of block b starts at b * blockFloats + kvh * headStride + o * rowStride
  // floats past the layer's `keys`/`values`.
  i64 blockSize, tableWidth, blockFloats, headStride, rowStride;
  // Row t of q starts at q + t * qStride + qOffset (likewise k and v):
  // q/k/v may be column ranges of one merged qkv buffer.
  i64 qStride, kStride, vStride, qOffset, kOffset, vOffset;
  i64 outStride; // row t of out at out + t * outStride (CPU: HEADS * dim)
  float scale, softcap; // softcap 0: off
  i64 window;           // sliding window in positions; 0: off
};

/// The sequence holding token t: the first s with queryEnds[s] > t.
template <typename I>
INGOT_DEVICE i64 sequenceOf(const I *queryEnds, i64 seqs, i64 t) {
  i64 lo = 0, hi = seqs;
  while (lo < hi) {
    const i64 mid = (lo + hi) / 2;
    if (i64(queryEnds[mid]) > t)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

template <int KV_HEADS, int HEAD_DIM, int ROTARY_DIM, typename I>
INGOT_DEVICE void pagedKvWrite(const float *k, const float *v,
                               const I *positions, const I *slots,
                               float *keys, float *values, AttnArgs a,
                               RopeParams r, i64 tokens) {
  constexpr int HALF = ROTARY_DIM / 2, TABLE = HALF > 0 ? HALF : 1;
  // The token's cos/sin, shared by its KV heads: one double sincos per pair.
  INGOT_SHARED float cosv[TABLE], sinv[TABLE];
  const i64 t = blockIdx.x;
  const int tid = threadIdx.x, n = blockDim.x;
  if (t >= tokens)
    return;
  if constexpr (ROTARY_DIM > 0) {
    for (int i = tid; i < HALF; i += n)
      ropeCosSin(i64(positions[t]), i, ROTARY_DIM, r, cosv[i], sinv[i]);
    syncBlock();
  }
  const i64 slot = slots[t];
  if (slot < 0)
    return;
  const i64 at = slot / a.blockSize * a.blockFloats +
                 slot % a.blockSize * a.rowStride;
  const float *kRow = k + t * a.kStride + a.kOffset;
  const float *vRow = v + t * a.vStride + a.vOffset;
  for (int e = tid; e < KV_HEADS * HEAD_DIM; e += n) {
    const int h = e / HEAD_DIM, d = e % HEAD_DIM;
    const i64 dst = at + h * a.headStride + d;
    keys[dst] =
        ropeElement<HEAD_DIM, ROTARY_DIM>(kRow + h * HEAD_DIM, d, cosv, sinv);
    values[dst] = vRow[h * HEAD_DIM + d];
  }
}

/// One warp's share of a (head, token) window: the online softmax state
/// over the keys it has seen, each lane holding dims lane + 32 i.
template <int HEAD_DIM> struct WarpSoftmax {
  static constexpr int DPL = (HEAD_DIM + kWarp - 1) / kWarp;
  float max, sum, acc[DPL];
};

/// Folds keys [lo, hi) of sequence `table`'s window into `st`, visiting them
/// as runs of consecutive rows within one cache block (one block-table
/// lookup and one division per run).
template <int HEAD_DIM, typename T>
INGOT_DEVICE void attendRange(WarpSoftmax<HEAD_DIM> &st, const float *qr,
                              const T *table, i64 kvh, i64 lo, i64 hi,
                              const float *keys, const float *values,
                              const AttnArgs &a) {
  constexpr int DPL = WarpSoftmax<HEAD_DIM>::DPL;
  const int lane = threadIdx.x % kWarp;
  for (i64 j = lo; j < hi;) {
    const i64 b = j / a.blockSize;
    const i64 stop = (b + 1) * a.blockSize < hi ? (b + 1) * a.blockSize : hi;
    i64 row = i64(table[b]) * a.blockFloats + kvh * a.headStride +
              (j - b * a.blockSize) * a.rowStride;
    for (; j < stop; ++j, row += a.rowStride) {
      const float *kr = keys + row, *vr = values + row;
      float dot = 0.f;
      for (int i = 0; i < DPL; ++i)
        if (lane + i * kWarp < HEAD_DIM)
          dot += qr[i] * kr[lane + i * kWarp];
      float s = a.scale * warpSum(dot);
      if (a.softcap > 0.f)
        s = a.softcap * tanhf(s * (1.f / a.softcap));
      // First key: max is -inf, so corr is 0 and the zero state drops out.
      const float mx = fmaxf(st.max, s);
      const float corr = expFast(st.max - mx), p = expFast(s - mx);
      st.sum = st.sum * corr + p;
      for (int i = 0; i < DPL; ++i)
        if (lane + i * kWarp < HEAD_DIM)
          st.acc[i] = st.acc[i] * corr + p * vr[lane + i * kWarp];
      st.max = mx;
    }
  }
}

/// Merges the WARPS partial results into out[0 .. HEAD_DIM): each warp's
/// sums rescaled by exp(its max - the overall max). A warp that saw no key
/// has max -inf and contributes nothing.
template <int HEAD_DIM, int WARPS>
INGOT_DEVICE void mergeWarps(const WarpSoftmax<HEAD_DIM> &st, float *out) {
  constexpr int DPL = WarpSoftmax<HEAD_DIM>::DPL;
  INGOT_SHARED float accs[WARPS * HEAD_DIM], maxs[WARPS], sums[WARPS];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int i = 0; i < DPL; ++i)
    if (lane + i * kWarp < HEAD_DIM)
      accs[warp * HEAD_DIM + lane + i * kWarp] = st.acc[i];
  if (lane == 0) {
    maxs[warp] = st.max;
    sums[warp] = st.sum;
  }
  syncBlock();
  float mx = maxs[0];
  for (int w = 1; w < WARPS; ++w)
    mx = fmaxf(mx, maxs[w]);
  float scales[WARPS], total = 0.f;
  for (int w = 0; w < WARPS; ++w) {
    scales[w] = expFast(maxs[w] - mx);
    total += scales[w] * sums[w];
  }
  const float inv = 1.f / total;
  for (int d = threadIdx.x; d < HEAD_DIM; d += WARPS * kWarp) {
    float o = 0.f;
    for (int w = 0; w < WARPS; ++w)
      o += scales[w] * accs[w * HEAD_DIM + d];
    out[d] = o * inv;
  }
}

template <int HEADS, int KV_HEADS, int HEAD_DIM, int ROTARY_DIM, int WARPS,
          typename I, typename T>
INGOT_DEVICE void pagedAttention(const float *q, const I *positions,
                                 const T *blockTables, const I *queryEnds,
                                 const float *keys, const float *values,
                                 float *out, AttnArgs a, RopeParams r,
                                 i64 tokens, i64 seqs) {
  static_assert(HEADS % KV_HEADS == 0, "heads must be a multiple of kv heads");
  static_assert(HEAD_DIM > 0 && HEAD_DIM <= 256, "head_dim in (0, 256]");
  static_assert(WARPS >= 1 && WARPS <= 32, "1 to 32 warps");
  constexpr int DPL = WarpSoftmax<HEAD_DIM>::DPL, THREADS = WARPS * kWarp;
  INGOT_SHARED float qs[HEAD_DIM];
  const i64 h = blockIdx.x, t = blockIdx.y;
  if (t >= tokens)
    return;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const i64 s = sequenceOf(queryEnds, seqs, t), p = positions[t];

  // The query head, rotated when asked, through shared memory: a rotary
  // pair need not sit in one lane.
  const float *qRow = q + t * a.qStride + a.qOffset + h * HEAD_DIM;
  if constexpr (ROTARY_DIM > 0)
    ropeHead<HEAD_DIM, ROTARY_DIM>(qRow, qs, p, r, threadIdx.x, THREADS);
  else
    for (int d = threadIdx.x; d < HEAD_DIM; d += THREADS)
      qs[d] = qRow[d];
  syncBlock();
  float qr[DPL];
  for (int i = 0; i < DPL; ++i)
    qr[i] = lane + i * kWarp < HEAD_DIM ? qs[lane + i * kWarp] : 0.f;

  // Window [j0, p], cut into WARPS contiguous runs, so each warp streams
  // whole cache blocks.
  const i64 j0 = a.window > 0 && p - a.window + 1 > 0 ? p - a.window + 1 : 0;
  const i64 per = (p - j0 + 1 + WARPS - 1) / WARPS;
  const i64 lo = j0 + warp * per;
  const i64 hi = lo + per < p + 1 ? lo + per : p + 1;
  WarpSoftmax<HEAD_DIM> st;
  st.max = -__uint_as_float(0x7f800000u);
  st.sum = 0.f;
  for (int i = 0; i < DPL; ++i)
    st.acc[i] = 0.f;
  attendRange<HEAD_DIM>(st, qr, blockTables + s * a.tableWidth,
                        h / (HEADS / KV_HEADS), lo, hi, keys, values, a);
  mergeWarps<HEAD_DIM, WARPS>(st, out + t * a.outStride + h * HEAD_DIM);
}

} // namespace ingot_k
