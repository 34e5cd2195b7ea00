//===- AttentionOps.cpp - Inner loops of paged_attention ------------------===//
//
// Per-function target attributes; the AVX2/AVX-512 versions are only called
// after CPUID checks (gemmIsaSupported). Scores keep up to four heads'
// accumulators in registers so each K row is loaded once for them; the
// weighted sum runs down a head-dim chunk of V with four independent
// accumulators to hide the FMA latency.
//
//===----------------------------------------------------------------------===//

#include "cpu/AttentionOps.h"

#include <algorithm>
#include <immintrin.h>

#define INGOT_AVX2 __attribute__((target("avx2,fma")))
#define INGOT_AVX512 __attribute__((target("avx512f")))

namespace ingot::cpu {
namespace {

void scoresGeneric(int64_t heads, int64_t d, const float *q, const float *rows,
                   int64_t count, int64_t stride, float scale, float *s,
                   int64_t ldS) {
  for (int64_t i = 0; i < count; ++i)
    for (int64_t h = 0; h < heads; ++h) {
      float lanes[8] = {};
      int64_t j = 0;
      for (; j + 8 <= d; j += 8)
        for (int l = 0; l < 8; ++l)
          lanes[l] += q[h * d + j + l] * rows[i * stride + j + l];
      float t = 0;
      for (; j < d; ++j)
        t += q[h * d + j] * rows[i * stride + j];
      for (float l : lanes)
        t += l;
      s[h * ldS + i] = scale * t;
    }
}

void accumulateGeneric(int64_t heads, int64_t d, const float *p, int64_t ldP,
                       const float *rows, int64_t count, int64_t stride,
                       float *acc) {
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < count; ++i) {
      const float w = p[h * ldP + i];
      for (int64_t j = 0; j < d; ++j)
        acc[h * d + j] += w * rows[i * stride + j];
    }
}

// --- AVX2 -------------------------------------------------------------------

INGOT_AVX2 inline float hsum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

INGOT_AVX2 inline __m256i tailMask8(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

template <int HN>
INGOT_AVX2 void scoresAvx2N(int64_t d, const float *q, const float *k,
                            float scale, float *s, int64_t ldS) {
  __m256 acc[HN];
  for (int h = 0; h < HN; ++h)
    acc[h] = _mm256_setzero_ps();
  const int64_t full = d / 8 * 8;
  for (int64_t c = 0; c < full; c += 8) {
    const __m256 kv = _mm256_loadu_ps(k + c);
    for (int h = 0; h < HN; ++h)
      acc[h] = _mm256_fmadd_ps(_mm256_loadu_ps(q + h * d + c), kv, acc[h]);
  }
  if (full < d) {
    const __m256i m = tailMask8(d - full);
    const __m256 kv = _mm256_maskload_ps(k + full, m);
    for (int h = 0; h < HN; ++h)
      acc[h] =
          _mm256_fmadd_ps(_mm256_maskload_ps(q + h * d + full, m), kv, acc[h]);
  }
  for (int h = 0; h < HN; ++h)
    s[h * ldS] = scale * hsum(acc[h]);
}

INGOT_AVX2 void scoresAvx2(int64_t heads, int64_t d, const float *q,
                           const float *rows, int64_t count, int64_t stride,
                           float scale, float *s, int64_t ldS) {
  for (int64_t i = 0; i < count; ++i)
    for (int64_t h = 0; h < heads; h += 4) {
      const float *qh = q + h * d, *k = rows + i * stride;
      float *sh = s + h * ldS + i;
      switch (std::min<int64_t>(4, heads - h)) {
      case 1:
        scoresAvx2N<1>(d, qh, k, scale, sh, ldS);
        break;
      case 2:
        scoresAvx2N<2>(d, qh, k, scale, sh, ldS);
        break;
      case 3:
        scoresAvx2N<3>(d, qh, k, scale, sh, ldS);
        break;
      default:
        scoresAvx2N<4>(d, qh, k, scale, sh, ldS);
        break;
      }
    }
}

INGOT_AVX2 void accumulateAvx2(int64_t heads, int64_t d, const float *p,
                               int64_t ldP, const float *rows, int64_t count,
                               int64_t stride, float *acc) {
  for (int64_t c = 0; c < d; c += 8) {
    const __m256i m = tailMask8(std::min<int64_t>(8, d - c));
    for (int64_t h = 0; h < heads; ++h) {
      const float *ph = p + h * ldP;
      __m256 a0 = _mm256_maskload_ps(acc + h * d + c, m);
      __m256 a1 = _mm256_setzero_ps(), a2 = a1, a3 = a1;
      const float *v = rows + c;
      int64_t i = 0;
      for (; i + 4 <= count; i += 4, v += 4 * stride) {
        a0 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i]), _mm256_maskload_ps(v, m),
                             a0);
        a1 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i + 1]),
                             _mm256_maskload_ps(v + stride, m), a1);
        a2 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i + 2]),
                             _mm256_maskload_ps(v + 2 * stride, m), a2);
        a3 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i + 3]),
                             _mm256_maskload_ps(v + 3 * stride, m), a3);
      }
      for (; i < count; ++i, v += stride)
        a0 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i]), _mm256_maskload_ps(v, m),
                             a0);
      a0 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
      _mm256_maskstore_ps(acc + h * d + c, m, a0);
    }
  }
}

// --- AVX-512 ----------------------------------------------------------------

/// Horizontal sum through maskz forms: GCC 12 warns about the "undefined"
/// registers that _mm512_reduce_add_ps and the plain forms start from.
INGOT_AVX512 inline float hsum(__m512 v) {
  __m512 t = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));
  t = _mm512_add_ps(t, _mm512_maskz_shuffle_f32x4(0xffff, t, t, 0xb1));
  __m128 h = _mm512_maskz_extractf32x4_ps(0xf, t, 0);
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

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
    s[h * ldS] = scale * hsum(acc[h]);
}

INGOT_AVX512 void scoresAvx512(int64_t heads, int64_t d, const float *q,
                               const float *rows, int64_t count, int64_t stride,
                               float scale, float *s, int64_t ldS) {
  for (int64_t i = 0; i < count; ++i)
    for (int64_t h = 0; h < heads; h += 4) {
      const float *qh = q + h * d, *k = rows + i * stride;
      float *sh = s + h * ldS + i;
      switch (std::min<int64_t>(4, heads - h)) {
      case 1:
        scoresAvx512N<1>(d, qh, k, scale, sh, ldS);
        break;
      case 2:
        scoresAvx512N<2>(d, qh, k, scale, sh, ldS);
        break;
      case 3:
        scoresAvx512N<3>(d, qh, k, scale, sh, ldS);
        break;
      default:
        scoresAvx512N<4>(d, qh, k, scale, sh, ldS);
        break;
      }
    }
}

INGOT_AVX512 void accumulateAvx512(int64_t heads, int64_t d, const float *p,
                                   int64_t ldP, const float *rows,
                                   int64_t count, int64_t stride, float *acc) {
  for (int64_t c = 0; c < d; c += 16) {
    const __mmask16 m = tailMask16(std::min<int64_t>(16, d - c));
    for (int64_t h = 0; h < heads; ++h) {
      const float *ph = p + h * ldP;
      __m512 a0 = _mm512_maskz_loadu_ps(m, acc + h * d + c);
      __m512 a1 = _mm512_setzero_ps(), a2 = a1, a3 = a1;
      const float *v = rows + c;
      int64_t i = 0;
      for (; i + 4 <= count; i += 4, v += 4 * stride) {
        a0 = _mm512_fmadd_ps(_mm512_set1_ps(ph[i]), _mm512_maskz_loadu_ps(m, v),
                             a0);
        a1 = _mm512_fmadd_ps(_mm512_set1_ps(ph[i + 1]),
                             _mm512_maskz_loadu_ps(m, v + stride), a1);
        a2 = _mm512_fmadd_ps(_mm512_set1_ps(ph[i + 2]),
                             _mm512_maskz_loadu_ps(m, v + 2 * stride), a2);
        a3 = _mm512_fmadd_ps(_mm512_set1_ps(ph[i + 3]),
                             _mm512_maskz_loadu_ps(m, v + 3 * stride), a3);
      }
      for (; i < count; ++i, v += stride)
        a0 = _mm512_fmadd_ps(_mm512_set1_ps(ph[i]), _mm512_maskz_loadu_ps(m, v),
                             a0);
      a0 = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
      _mm512_mask_storeu_ps(acc + h * d + c, m, a0);
    }
  }
}

} // namespace

const AttentionOps &attentionOps(GemmIsa isa) {
  static const AttentionOps generic{scoresGeneric, accumulateGeneric};
  static const AttentionOps avx2{scoresAvx2, accumulateAvx2};
  static const AttentionOps avx512{scoresAvx512, accumulateAvx512};
  return isa == GemmIsa::Avx512 ? avx512
         : isa == GemmIsa::Avx2 ? avx2
                                : generic;
}

const AttentionOps &bestAttentionOps() { return attentionOps(bestGemmIsa()); }

} // namespace ingot::cpu
