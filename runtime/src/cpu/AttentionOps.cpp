//===- AttentionOps.cpp - Inner loops of paged_attention ------------------===//
//
// Per-function target attributes; the AVX2 versions are only called after
// CPUID checks (gemmIsaSupported), the AVX-512 ones live in
// AttentionOpsAvx512.cpp. Scores keep up to four heads' accumulators in
// registers so each K row is loaded once for them, and several rows at
// once, each score keeping its own bits; the weighted sum runs down a
// head-dim chunk of V with independent accumulators to hide the FMA
// latency, each V load shared by two heads.
//
//===----------------------------------------------------------------------===//

#include "cpu/AttentionOps.h"

#include <algorithm>
#include <immintrin.h>

#define INGOT_AVX2 __attribute__((target("avx2,fma")))

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

/// [a.lo + a.hi | b.lo + b.hi]: hsum's first step for two vectors.
INGOT_AVX2 inline __m256 addHalves(__m256 a, __m256 b) {
  return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20),
                       _mm256_permute2f128_ps(a, b, 0x31));
}

/// Per 128-bit lane, [x0 + x2, x1 + x3, y0 + y2, y1 + y3]: hsum's second.
INGOT_AVX2 inline __m256 addApart2(__m256 x, __m256 y) {
  const __m256d a = _mm256_castps_pd(x), b = _mm256_castps_pd(y);
  return _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(a, b)),
                       _mm256_castpd_ps(_mm256_unpackhi_pd(a, b)));
}

/// hsum of eight vectors at once, pairing the same lanes in the same order
/// (halves, then lanes two apart, then neighbours), so each sum has the
/// bits hsum gives it alone. The sums come out in the order
/// v0 v2 v4 v6 v1 v3 v5 v7 (kHsum8Lane).
INGOT_AVX2 inline __m256 hsum8(const __m256 *v) {
  const __m256 u0 = addApart2(addHalves(v[0], v[1]), addHalves(v[2], v[3]));
  const __m256 u1 = addApart2(addHalves(v[4], v[5]), addHalves(v[6], v[7]));
  return _mm256_add_ps(_mm256_shuffle_ps(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm256_shuffle_ps(u0, u1, _MM_SHUFFLE(3, 1, 3, 1)));
}
constexpr int kHsum8Lane[8] = {0, 4, 1, 5, 2, 6, 3, 7}; // lane of v[a]

INGOT_AVX2 inline __m256i tailMask8(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Scores of HN heads against R consecutive rows. Each score is the chain
/// of FMAs over d in order and the hsum that a single (head, row) would
/// get, so neither R nor a row's place in the run changes its bits; the
/// HN·R independent chains hide the FMA latency one row's HN cannot.
template <int HN, int R>
INGOT_AVX2 void scoresAvx2Tile(int64_t d, const float *q, const float *k,
                               int64_t stride, float scale, float *s,
                               int64_t ldS) {
  static_assert(HN * R <= 8, "eight accumulators");
  __m256 acc[8];
  for (__m256 &a : acc)
    a = _mm256_setzero_ps();
  const int64_t full = d / 8 * 8;
  for (int64_t c = 0; c < full; c += 8) {
    __m256 qv[HN];
    for (int h = 0; h < HN; ++h)
      qv[h] = _mm256_loadu_ps(q + h * d + c);
    for (int r = 0; r < R; ++r) {
      const __m256 kv = _mm256_loadu_ps(k + r * stride + c);
      for (int h = 0; h < HN; ++h)
        acc[h * R + r] = _mm256_fmadd_ps(qv[h], kv, acc[h * R + r]);
    }
  }
  if (full < d) {
    const __m256i m = tailMask8(d - full);
    __m256 qv[HN];
    for (int h = 0; h < HN; ++h)
      qv[h] = _mm256_maskload_ps(q + h * d + full, m);
    for (int r = 0; r < R; ++r) {
      const __m256 kv = _mm256_maskload_ps(k + r * stride + full, m);
      for (int h = 0; h < HN; ++h)
        acc[h * R + r] = _mm256_fmadd_ps(qv[h], kv, acc[h * R + r]);
    }
  }
  alignas(32) float out[8];
  _mm256_store_ps(out, _mm256_mul_ps(_mm256_set1_ps(scale), hsum8(acc)));
  for (int h = 0; h < HN; ++h)
    for (int r = 0; r < R; ++r)
      s[h * ldS + r] = out[kHsum8Lane[h * R + r]];
}

/// All `count` rows for HN heads: tiles of R rows, the rest one by one.
template <int HN, int R>
INGOT_AVX2 void scoresAvx2Heads(int64_t d, const float *q, const float *rows,
                                int64_t count, int64_t stride, float scale,
                                float *s, int64_t ldS) {
  int64_t i = 0;
  for (; i + R <= count; i += R)
    scoresAvx2Tile<HN, R>(d, q, rows + i * stride, stride, scale, s + i, ldS);
  for (; i < count; ++i)
    scoresAvx2Tile<HN, 1>(d, q, rows + i * stride, stride, scale, s + i, ldS);
}

INGOT_AVX2 void scoresAvx2(int64_t heads, int64_t d, const float *q,
                           const float *rows, int64_t count, int64_t stride,
                           float scale, float *s, int64_t ldS) {
  for (int64_t h = 0; h < heads; h += 4) {
    const float *qh = q + h * d;
    float *sh = s + h * ldS;
    switch (std::min<int64_t>(4, heads - h)) {
    case 1:
      scoresAvx2Heads<1, 8>(d, qh, rows, count, stride, scale, sh, ldS);
      break;
    case 2:
      scoresAvx2Heads<2, 4>(d, qh, rows, count, stride, scale, sh, ldS);
      break;
    case 3:
      scoresAvx2Heads<3, 2>(d, qh, rows, count, stride, scale, sh, ldS);
      break;
    default:
      scoresAvx2Heads<4, 2>(d, qh, rows, count, stride, scale, sh, ldS);
      break;
    }
  }
}

/// acc += p·V for HN heads over two whole 8-float columns of V at `c`:
/// each V row is loaded once for all HN heads. Per output element, even
/// rows add into the accumulator and odd rows into a second chain, added
/// last: the same order whatever HN is.
template <int HN>
INGOT_AVX2 void accumulateAvx2Pair(int64_t d, const float *p, int64_t ldP,
                                   const float *rows, int64_t count,
                                   int64_t stride, float *acc, int64_t c) {
  __m256 even[HN][2], odd[HN][2];
  for (int h = 0; h < HN; ++h)
    for (int x = 0; x < 2; ++x) {
      even[h][x] = _mm256_loadu_ps(acc + h * d + c + 8 * x);
      odd[h][x] = _mm256_setzero_ps();
    }
  const float *v = rows + c;
  int64_t i = 0;
  for (; i + 2 <= count; i += 2, v += 2 * stride) {
    const __m256 e0 = _mm256_loadu_ps(v), e1 = _mm256_loadu_ps(v + 8);
    const __m256 o0 = _mm256_loadu_ps(v + stride);
    const __m256 o1 = _mm256_loadu_ps(v + stride + 8);
    for (int h = 0; h < HN; ++h) {
      const __m256 pe = _mm256_set1_ps(p[h * ldP + i]);
      const __m256 po = _mm256_set1_ps(p[h * ldP + i + 1]);
      even[h][0] = _mm256_fmadd_ps(pe, e0, even[h][0]);
      even[h][1] = _mm256_fmadd_ps(pe, e1, even[h][1]);
      odd[h][0] = _mm256_fmadd_ps(po, o0, odd[h][0]);
      odd[h][1] = _mm256_fmadd_ps(po, o1, odd[h][1]);
    }
  }
  if (i < count) {
    const __m256 e0 = _mm256_loadu_ps(v), e1 = _mm256_loadu_ps(v + 8);
    for (int h = 0; h < HN; ++h) {
      const __m256 pe = _mm256_set1_ps(p[h * ldP + i]);
      even[h][0] = _mm256_fmadd_ps(pe, e0, even[h][0]);
      even[h][1] = _mm256_fmadd_ps(pe, e1, even[h][1]);
    }
  }
  for (int h = 0; h < HN; ++h)
    for (int x = 0; x < 2; ++x)
      _mm256_storeu_ps(acc + h * d + c + 8 * x,
                       _mm256_add_ps(even[h][x], odd[h][x]));
}

/// acc += p·V over the 8-float column at `c` (masked past d) for one head,
/// with four chains over the rows.
INGOT_AVX2 void accumulateAvx2Column(int64_t d, const float *ph,
                                     const float *rows, int64_t count,
                                     int64_t stride, float *acch, int64_t c) {
  const __m256i m = tailMask8(std::min<int64_t>(8, d - c));
  __m256 a0 = _mm256_maskload_ps(acch + c, m);
  __m256 a1 = _mm256_setzero_ps(), a2 = a1, a3 = a1;
  const float *v = rows + c;
  int64_t i = 0;
  for (; i + 4 <= count; i += 4, v += 4 * stride) {
    a0 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i]), _mm256_maskload_ps(v, m), a0);
    a1 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i + 1]),
                         _mm256_maskload_ps(v + stride, m), a1);
    a2 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i + 2]),
                         _mm256_maskload_ps(v + 2 * stride, m), a2);
    a3 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i + 3]),
                         _mm256_maskload_ps(v + 3 * stride, m), a3);
  }
  for (; i < count; ++i, v += stride)
    a0 = _mm256_fmadd_ps(_mm256_set1_ps(ph[i]), _mm256_maskload_ps(v, m), a0);
  a0 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  _mm256_maskstore_ps(acch + c, m, a0);
}

/// Whole 16-float column pairs go two heads at a time; the columns past
/// the last pair (d not a multiple of 16) one head at a time.
INGOT_AVX2 void accumulateAvx2(int64_t heads, int64_t d, const float *p,
                               int64_t ldP, const float *rows, int64_t count,
                               int64_t stride, float *acc) {
  const int64_t pairs = d / 16 * 16;
  for (int64_t c = 0; c < pairs; c += 16) {
    int64_t h = 0;
    for (; h + 2 <= heads; h += 2)
      accumulateAvx2Pair<2>(d, p + h * ldP, ldP, rows, count, stride,
                            acc + h * d, c);
    if (h < heads)
      accumulateAvx2Pair<1>(d, p + h * ldP, ldP, rows, count, stride,
                            acc + h * d, c);
  }
  for (int64_t c = pairs; c < d; c += 8)
    for (int64_t h = 0; h < heads; ++h)
      accumulateAvx2Column(d, p + h * ldP, rows, count, stride, acc + h * d, c);
}

} // namespace

const AttentionOps &attentionOps(GemmIsa isa) {
  static const AttentionOps generic{scoresGeneric, accumulateGeneric};
  static const AttentionOps avx2{scoresAvx2, accumulateAvx2};
  return isa == GemmIsa::Avx512 ? avx512AttentionOps()
         : isa == GemmIsa::Avx2 ? avx2
                                : generic;
}

const AttentionOps &bestAttentionOps() { return attentionOps(bestGemmIsa()); }

} // namespace ingot::cpu
