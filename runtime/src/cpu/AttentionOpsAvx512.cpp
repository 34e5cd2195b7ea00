//===- AttentionOpsAvx512.cpp - AVX-512 inner loops of paged_attention ----===//
//
// AttentionOps.h's two loops with per-function AVX-512F target attributes;
// only reached after CPUID reported AVX-512F (attentionOps). Scores take
// four K rows against up to four heads at a time, their 16 horizontal sums
// in one hsum16x16 pass with one-sum bits; the weighted sum loads each V
// row once for up to four heads, each (head, element) keeping its four
// chains.
//
//===----------------------------------------------------------------------===//

#include "cpu/AttentionOps.h"
#include "cpu/HsumAvx512.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <type_traits>

#define INGOT_AVX512 __attribute__((target("avx512f")))

namespace ingot::cpu {
namespace {

INGOT_AVX512 inline __mmask16 tailMask16(int64_t n) {
  return __mmask16((1u << n) - 1);
}

template <int HN>
INGOT_AVX512 void scoresAvx512N(int64_t d, const float *q, const float *k,
                                float scale, float *s, int64_t ldS) {
  __m512 acc[HN];
  for (int h = 0; h < HN; ++h)
    acc[h] = _mm512_setzero_ps();
  const int64_t full = d / 16 * 16;
  for (int64_t c = 0; c < full; c += 16) {
    const __m512 kv = _mm512_loadu_ps(k + c);
    for (int h = 0; h < HN; ++h)
      acc[h] = _mm512_fmadd_ps(_mm512_loadu_ps(q + h * d + c), kv, acc[h]);
  }
  if (full < d) {
    const __mmask16 m = tailMask16(d - full);
    const __m512 kv = _mm512_maskz_loadu_ps(m, k + full);
    for (int h = 0; h < HN; ++h)
      acc[h] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + h * d + full), kv,
                               acc[h]);
  }
  for (int h = 0; h < HN; ++h)
    s[h * ldS] = scale * hsum16(acc[h]);
}

/// Scores of HN heads against four consecutive rows: HN x 4 chains, each
/// the FMAs over d in order that scoresAvx512N gives one (head, row), and
/// their horizontal sums in one hsum16x16 pass with hsum16's bits (the
/// chains of missing heads stay zero and are not stored).
template <int HN>
INGOT_AVX512 void scoresAvx512Rows4(int64_t d, const float *q, const float *k,
                                    int64_t stride, float scale, float *s,
                                    int64_t ldS) {
  // Loops unrolled in full: the accumulators stay in registers.
  __m512 acc[16]; // acc[4 * h + r]: head h, row r
#pragma GCC unroll 16
  for (__m512 &a : acc)
    a = _mm512_setzero_ps();
  for (int64_t c = 0; c < d; c += 16) {
    const __mmask16 m = tailMask16(std::min<int64_t>(16, d - c));
    __m512 kv[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
      kv[r] = _mm512_maskz_loadu_ps(m, k + r * stride + c);
#pragma GCC unroll 4
    for (int h = 0; h < HN; ++h) {
      const __m512 qv = _mm512_maskz_loadu_ps(m, q + h * d + c);
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r)
        acc[4 * h + r] = _mm512_fmadd_ps(qv, kv[r], acc[4 * h + r]);
    }
  }
  alignas(64) float sums[16];
  _mm512_store_ps(sums, _mm512_mul_ps(_mm512_set1_ps(scale), hsum16x16(acc)));
  for (int h = 0; h < HN; ++h)
    std::memcpy(s + h * ldS, sums + 4 * h, 4 * sizeof(float));
}

/// All `count` rows for HN heads: four rows at a time, the rest one by one.
template <int HN>
INGOT_AVX512 void
scoresAvx512Heads(int64_t d, const float *q, const float *rows, int64_t count,
                  int64_t stride, float scale, float *s, int64_t ldS) {
  int64_t i = 0;
  for (; i + 4 <= count; i += 4)
    scoresAvx512Rows4<HN>(d, q, rows + i * stride, stride, scale, s + i, ldS);
  for (; i < count; ++i)
    scoresAvx512N<HN>(d, q, rows + i * stride, scale, s + i, ldS);
}

/// Calls fn with std::integral_constant<int, N>, N = min(4, n) >= 1: the
/// head count of a register tile.
template <typename Fn> void withHeadTile(int64_t n, Fn &&fn) {
  switch (std::min<int64_t>(4, n)) {
  case 1:
    return fn(std::integral_constant<int, 1>());
  case 2:
    return fn(std::integral_constant<int, 2>());
  case 3:
    return fn(std::integral_constant<int, 3>());
  default:
    return fn(std::integral_constant<int, 4>());
  }
}

INGOT_AVX512 void scoresAvx512(int64_t heads, int64_t d, const float *q,
                               const float *rows, int64_t count, int64_t stride,
                               float scale, float *s, int64_t ldS) {
  for (int64_t h = 0; h < heads; h += 4)
    withHeadTile(heads - h, [&](auto hn) {
      scoresAvx512Heads<hn()>(d, q + h * d, rows, count, stride, scale,
                              s + h * ldS, ldS);
    });
}

/// acc += p·V for HN heads over the 16-float column at `c` (masked past d):
/// each V row is loaded once for all HN heads. Per (head, element), rows
/// i = 0, 1, 2, 3 mod 4 feed four chains (the first starts from acc; rows
/// past the last multiple of 4 go to it too), added (a0 + a1) + (a2 + a3)
/// at the end: the same order whatever HN is.
template <int HN>
INGOT_AVX512 void accumulateAvx512Heads(int64_t d, const float *p, int64_t ldP,
                                        const float *rows, int64_t count,
                                        int64_t stride, float *acc, int64_t c) {
  const __mmask16 m = tailMask16(std::min<int64_t>(16, d - c));
  __m512 a[HN][4];
#pragma GCC unroll 4
  for (int h = 0; h < HN; ++h) {
    a[h][0] = _mm512_maskz_loadu_ps(m, acc + h * d + c);
    a[h][1] = a[h][2] = a[h][3] = _mm512_setzero_ps();
  }
  const float *v = rows + c;
  int64_t i = 0;
  for (; i + 4 <= count; i += 4, v += 4 * stride)
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const __m512 vu = _mm512_maskz_loadu_ps(m, v + u * stride);
#pragma GCC unroll 4
      for (int h = 0; h < HN; ++h)
        a[h][u] =
            _mm512_fmadd_ps(_mm512_set1_ps(p[h * ldP + i + u]), vu, a[h][u]);
    }
  for (; i < count; ++i, v += stride) {
    const __m512 vi = _mm512_maskz_loadu_ps(m, v);
#pragma GCC unroll 4
    for (int h = 0; h < HN; ++h)
      a[h][0] = _mm512_fmadd_ps(_mm512_set1_ps(p[h * ldP + i]), vi, a[h][0]);
  }
#pragma GCC unroll 4
  for (int h = 0; h < HN; ++h)
    _mm512_mask_storeu_ps(acc + h * d + c, m,
                          _mm512_add_ps(_mm512_add_ps(a[h][0], a[h][1]),
                                        _mm512_add_ps(a[h][2], a[h][3])));
}

INGOT_AVX512 void accumulateAvx512(int64_t heads, int64_t d, const float *p,
                                   int64_t ldP, const float *rows,
                                   int64_t count, int64_t stride, float *acc) {
  for (int64_t c = 0; c < d; c += 16)
    for (int64_t h = 0; h < heads; h += 4)
      withHeadTile(heads - h, [&](auto hn) {
        accumulateAvx512Heads<hn()>(d, p + h * ldP, ldP, rows, count, stride,
                                    acc + h * d, c);
      });
}

} // namespace

const AttentionOps &avx512AttentionOps() {
  static const AttentionOps ops{scoresAvx512, accumulateAvx512};
  return ops;
}

} // namespace ingot::cpu
