//===- GemmAvx2.cpp - AVX2+FMA GEMM micro-kernels -------------------------===//
//
// Compiled for the baseline ISA with per-function target attributes, and only
// called after CPUID reported AVX2 and FMA (see gemmIsaSupported).
//
// Micro-kernel: 6 x 16 tile = 12 ymm accumulators + 2 B vectors + 1
// broadcast A value, 15 of the 16 ymm registers; per k step 2 loads of B and
// 6 broadcasts feed 12 FMAs.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"

#include <immintrin.h>

#define INGOT_AVX2 __attribute__((target("avx2,fma")))

namespace ingot::cpu {
namespace {

constexpr int kMr = 6, kNr = 16;

INGOT_AVX2 inline __m256 blend(__m256 acc, const float *c, __m256 alpha,
                               __m256 beta, bool readC) {
  __m256 v = _mm256_mul_ps(acc, alpha);
  return readC ? _mm256_fmadd_ps(beta, _mm256_loadu_ps(c), v) : v;
}

/// The 6 x 16 tile, A packed (kRowMajorA false) or read in place from
/// row-major rows lda apart (rows past mr repeat the last; never stored).
template <bool kRowMajorA>
INGOT_AVX2 inline void
tile6x16(int64_t kc, const float *ap, int64_t lda, const float *bp, float *c,
         int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta) {
  const float *rows[kMr];
  for (int r = 0; r < kMr; ++r)
    rows[r] = ap + (r < mr ? r : mr - 1) * lda;
  // Named accumulators rather than an array: GCC otherwise keeps the array
  // in memory and stores all 12 vectors on every k step.
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00,
         c21 = c00, c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00,
         c51 = c00;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const __m256 b0 = _mm256_load_ps(bp);
    const __m256 b1 = _mm256_load_ps(bp + 8);
    __m256 a = _mm256_broadcast_ss(kRowMajorA ? rows[0] + kk : ap + 0);
    c00 = _mm256_fmadd_ps(a, b0, c00);
    c01 = _mm256_fmadd_ps(a, b1, c01);
    a = _mm256_broadcast_ss(kRowMajorA ? rows[1] + kk : ap + 1);
    c10 = _mm256_fmadd_ps(a, b0, c10);
    c11 = _mm256_fmadd_ps(a, b1, c11);
    a = _mm256_broadcast_ss(kRowMajorA ? rows[2] + kk : ap + 2);
    c20 = _mm256_fmadd_ps(a, b0, c20);
    c21 = _mm256_fmadd_ps(a, b1, c21);
    a = _mm256_broadcast_ss(kRowMajorA ? rows[3] + kk : ap + 3);
    c30 = _mm256_fmadd_ps(a, b0, c30);
    c31 = _mm256_fmadd_ps(a, b1, c31);
    a = _mm256_broadcast_ss(kRowMajorA ? rows[4] + kk : ap + 4);
    c40 = _mm256_fmadd_ps(a, b0, c40);
    c41 = _mm256_fmadd_ps(a, b1, c41);
    a = _mm256_broadcast_ss(kRowMajorA ? rows[5] + kk : ap + 5);
    c50 = _mm256_fmadd_ps(a, b0, c50);
    c51 = _mm256_fmadd_ps(a, b1, c51);
    if (!kRowMajorA)
      ap += kMr;
    bp += kNr;
  }
  alignas(32) float tile[kMr * kNr];
  const __m256 acc[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                              {c30, c31}, {c40, c41}, {c50, c51}};
  if (mr == kMr && nr == kNr) {
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    const bool readC = beta != 0.0f;
    for (int r = 0; r < kMr; ++r) {
      float *row = c + r * ldc;
      _mm256_storeu_ps(row, blend(acc[r][0], row, va, vb, readC));
      _mm256_storeu_ps(row + 8, blend(acc[r][1], row + 8, va, vb, readC));
    }
    return;
  }
  for (int r = 0; r < kMr; ++r) {
    _mm256_store_ps(tile + r * kNr, acc[r][0]);
    _mm256_store_ps(tile + r * kNr + 8, acc[r][1]);
  }
  storeTile(tile, kNr, c, ldc, mr, nr, alpha, beta);
}

INGOT_AVX2 void micro6x16(int64_t kc, const float *ap, const float *bp,
                          float *c, int64_t ldc, int64_t mr, int64_t nr,
                          float alpha, float beta) {
  tile6x16<false>(kc, ap, 0, bp, c, ldc, mr, nr, alpha, beta);
}

INGOT_AVX2 void micro6x16RowA(int64_t kc, const float *a, int64_t lda,
                              const float *bp, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, float alpha, float beta) {
  tile6x16<true>(kc, a, lda, bp, c, ldc, mr, nr, alpha, beta);
}

/// M rows of C over nn <= kSmallMWidth columns in one pass over k: each step
/// takes KU rows of B, loads every B vector once and applies it to the M
/// accumulator rows, which live in L1. KU keeps the broadcasts of A, the B
/// vectors and one accumulator within the 16 ymm registers.
template <int M>
INGOT_AVX2 void smallMRows(int64_t k, int64_t nn, const float *a, int64_t aRow,
                           int64_t aCol, const float *b, int64_t ldb, float *c,
                           int64_t ldc, float alpha, float beta) {
  constexpr int KU = M <= 2 ? 4 : 2;
  alignas(32) float acc[M][kSmallMWidth];
  const int64_t nv = (nn + 7) / 8;
  const int64_t rest = nn - (nv - 1) * 8; // valid lanes of the last vector
  const __m256i tail = _mm256_cmpgt_epi32(
      _mm256_set1_epi32(int(rest)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i full = _mm256_set1_epi32(-1);
  for (int r = 0; r < M; ++r)
    for (int64_t v = 0; v < nv; ++v)
      _mm256_store_ps(acc[r] + 8 * v, _mm256_setzero_ps());
  int64_t kk = 0;
  for (; kk + KU <= k; kk += KU) {
    const float *b0 = b + kk * ldb;
    __m256 av[M][KU];
    for (int r = 0; r < M; ++r)
      for (int q = 0; q < KU; ++q)
        av[r][q] = _mm256_set1_ps(a[r * aRow + (kk + q) * aCol]);
    for (int64_t v = 0; v < nv; ++v) {
      const __m256i mk = v + 1 < nv ? full : tail;
      __m256 x[KU];
      for (int q = 0; q < KU; ++q)
        x[q] = _mm256_maskload_ps(b0 + q * ldb + 8 * v, mk);
      for (int r = 0; r < M; ++r) {
        float *p = acc[r] + 8 * v;
        __m256 t = _mm256_load_ps(p);
        for (int q = 0; q < KU; ++q)
          t = _mm256_fmadd_ps(av[r][q], x[q], t);
        _mm256_store_ps(p, t);
      }
    }
  }
  for (; kk < k; ++kk) {
    const float *b0 = b + kk * ldb;
    for (int64_t v = 0; v < nv; ++v) {
      const __m256 x0 =
          _mm256_maskload_ps(b0 + 8 * v, v + 1 < nv ? full : tail);
      for (int r = 0; r < M; ++r) {
        float *p = acc[r] + 8 * v;
        _mm256_store_ps(p,
                        _mm256_fmadd_ps(_mm256_set1_ps(a[r * aRow + kk * aCol]),
                                        x0, _mm256_load_ps(p)));
      }
    }
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  for (int r = 0; r < M; ++r)
    for (int64_t v = 0; v < nv; ++v) {
      const __m256i mk = v + 1 < nv ? full : tail;
      float *out = c + r * ldc + 8 * v;
      __m256 val = _mm256_mul_ps(_mm256_load_ps(acc[r] + 8 * v), va);
      if (beta != 0.0f)
        val = _mm256_fmadd_ps(vb, _mm256_maskload_ps(out, mk), val);
      _mm256_maskstore_ps(out, mk, val);
    }
}

void smallM(int64_t m, int64_t k, int64_t nn, const float *a, int64_t aRow,
            int64_t aCol, const float *b, int64_t ldb, float *c, int64_t ldc,
            float alpha, float beta) {
  switch (m) {
  case 1:
    smallMRows<1>(k, nn, a, aRow, aCol, b, ldb, c, ldc, alpha, beta);
    break;
  case 2:
    smallMRows<2>(k, nn, a, aRow, aCol, b, ldb, c, ldc, alpha, beta);
    break;
  case 3:
    smallMRows<3>(k, nn, a, aRow, aCol, b, ldb, c, ldc, alpha, beta);
    break;
  default:
    smallMRows<4>(k, nn, a, aRow, aCol, b, ldb, c, ldc, alpha, beta);
    break;
  }
}

INGOT_AVX2 float dot(int64_t k, const float *x, const float *y) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= k; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8),
                         s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16),
                         _mm256_loadu_ps(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24),
                         _mm256_loadu_ps(y + i + 24), s3);
  }
  for (; i + 8 <= k; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
  __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float t = _mm_cvtss_f32(h);
  for (; i < k; ++i)
    t += x[i] * y[i];
  return t;
}

} // namespace

const GemmKernelSet &avx2GemmKernels() {
  static const GemmKernelSet set{kMr,           kNr,    micro6x16,
                                 micro6x16RowA, smallM, dot};
  return set;
}

} // namespace ingot::cpu
