//===- GemmAvx512.cpp - AVX-512F GEMM micro-kernels -----------------------===//
//
// Compiled with per-function target attributes; only called after CPUID
// reported AVX-512F (see gemmIsaSupported).
//
// Micro-kernel: 12 x 32 tile = 24 zmm accumulators + 2 B vectors + 1
// broadcast, 27 of the 32 zmm registers; 24 FMAs per 2 B loads and 12
// broadcasts keep both FMA pipes busy.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"

#include <immintrin.h>

#define INGOT_AVX512 __attribute__((target("avx512f")))

namespace ingot::cpu {
namespace {

constexpr int kMr = 12, kNr = 32;

INGOT_AVX512 inline __m512 blend(__m512 acc, const float *c, __m512 alpha,
                                 __m512 beta, bool readC, __mmask16 mask) {
  __m512 v = _mm512_mul_ps(acc, alpha);
  return readC ? _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask, c), v) : v;
}

/// The R x 32 tile (R <= 12 rows computed; a packed A panel still holds
/// kMr values per k step). A is packed (kRowMajorA false) or read in place
/// from row-major rows lda apart (rows past mr repeat the last one; their
/// sums are never stored), which saves packing A at all: each broadcast
/// reads one float either way.
template <int R, bool kRowMajorA>
INGOT_AVX512 inline void
tileRx32(int64_t kc, const float *a, int64_t lda, const float *bp, float *c,
         int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta) {
  __m512 acc[R][2];
  const float *rows[R];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    rows[r] = a + (r < mr ? r : mr - 1) * lda;
  }
  for (int64_t kk = 0; kk < kc; ++kk) {
    const __m512 b0 = _mm512_load_ps(bp);
    const __m512 b1 = _mm512_load_ps(bp + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 av =
          _mm512_set1_ps(kRowMajorA ? rows[r][kk] : a[kk * kMr + r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
    bp += kNr;
  }
  // Partial columns use masked loads/stores; rows past mr are skipped.
  const int64_t n0 = nr < 16 ? nr : 16, n1 = nr < 16 ? 0 : nr - 16;
  const __mmask16 m0 = __mmask16((1u << n0) - 1);
  const __mmask16 m1 = __mmask16((1u << n1) - 1);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const bool readC = beta != 0.0f;
  for (int r = 0; r < R; ++r) {
    if (r >= mr)
      break;
    float *row = c + r * ldc;
    _mm512_mask_storeu_ps(row, m0, blend(acc[r][0], row, va, vb, readC, m0));
    if (n1)
      _mm512_mask_storeu_ps(row + 16, m1,
                            blend(acc[r][1], row + 16, va, vb, readC, m1));
  }
}

/// A last tile of a few rows (M = 16 is 12 + 4) computes only those: a
/// full 12-row tile there would spend half of a 16-row GEMM on padding.
template <bool kRowMajorA>
INGOT_AVX512 inline void tileUpTo12x32(int64_t kc, const float *a, int64_t lda,
                                       const float *bp, float *c, int64_t ldc,
                                       int64_t mr, int64_t nr, float alpha,
                                       float beta) {
  if (mr <= 4)
    tileRx32<4, kRowMajorA>(kc, a, lda, bp, c, ldc, mr, nr, alpha, beta);
  else if (mr <= 8)
    tileRx32<8, kRowMajorA>(kc, a, lda, bp, c, ldc, mr, nr, alpha, beta);
  else
    tileRx32<kMr, kRowMajorA>(kc, a, lda, bp, c, ldc, mr, nr, alpha, beta);
}

INGOT_AVX512 void micro12x32(int64_t kc, const float *ap, const float *bp,
                             float *c, int64_t ldc, int64_t mr, int64_t nr,
                             float alpha, float beta) {
  tileUpTo12x32<false>(kc, ap, 0, bp, c, ldc, mr, nr, alpha, beta);
}

INGOT_AVX512 void micro12x32RowA(int64_t kc, const float *a, int64_t lda,
                                 const float *bp, float *c, int64_t ldc,
                                 int64_t mr, int64_t nr, float alpha,
                                 float beta) {
  tileUpTo12x32<true>(kc, a, lda, bp, c, ldc, mr, nr, alpha, beta);
}

/// M rows of C over nn <= kSmallMWidth columns in one pass over k: each step
/// takes 4 rows of B, loads every B vector once and applies it to the M
/// accumulator rows, which live in L1.
template <int M>
INGOT_AVX512 void smallMRows(int64_t k, int64_t nn, const float *a,
                             int64_t aRow, int64_t aCol, const float *b,
                             int64_t ldb, float *c, int64_t ldc, float alpha,
                             float beta) {
  alignas(64) float acc[M][kSmallMWidth];
  const int64_t nv = (nn + 15) / 16;
  const __mmask16 tail = __mmask16((1u << (nn - (nv - 1) * 16)) - 1);
  for (int r = 0; r < M; ++r)
    for (int64_t v = 0; v < nv; ++v)
      _mm512_store_ps(acc[r] + 16 * v, _mm512_setzero_ps());
  int64_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    const float *b0 = b + kk * ldb;
    __m512 av[M][4];
    for (int r = 0; r < M; ++r)
      for (int q = 0; q < 4; ++q)
        av[r][q] = _mm512_set1_ps(a[r * aRow + (kk + q) * aCol]);
    for (int64_t v = 0; v < nv; ++v) {
      const __mmask16 mk = v + 1 < nv ? __mmask16(0xffff) : tail;
      const __m512 x0 = _mm512_maskz_loadu_ps(mk, b0 + 16 * v);
      const __m512 x1 = _mm512_maskz_loadu_ps(mk, b0 + ldb + 16 * v);
      const __m512 x2 = _mm512_maskz_loadu_ps(mk, b0 + 2 * ldb + 16 * v);
      const __m512 x3 = _mm512_maskz_loadu_ps(mk, b0 + 3 * ldb + 16 * v);
      for (int r = 0; r < M; ++r) {
        float *p = acc[r] + 16 * v;
        __m512 t = _mm512_load_ps(p);
        t = _mm512_fmadd_ps(av[r][0], x0, t);
        t = _mm512_fmadd_ps(av[r][1], x1, t);
        t = _mm512_fmadd_ps(av[r][2], x2, t);
        t = _mm512_fmadd_ps(av[r][3], x3, t);
        _mm512_store_ps(p, t);
      }
    }
  }
  for (; kk < k; ++kk) {
    const float *b0 = b + kk * ldb;
    for (int64_t v = 0; v < nv; ++v) {
      const __mmask16 mk = v + 1 < nv ? __mmask16(0xffff) : tail;
      const __m512 x0 = _mm512_maskz_loadu_ps(mk, b0 + 16 * v);
      for (int r = 0; r < M; ++r) {
        float *p = acc[r] + 16 * v;
        _mm512_store_ps(p,
                        _mm512_fmadd_ps(_mm512_set1_ps(a[r * aRow + kk * aCol]),
                                        x0, _mm512_load_ps(p)));
      }
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int r = 0; r < M; ++r)
    for (int64_t v = 0; v < nv; ++v) {
      const __mmask16 mk = v + 1 < nv ? __mmask16(0xffff) : tail;
      float *out = c + r * ldc + 16 * v;
      _mm512_mask_storeu_ps(out, mk,
                            blend(_mm512_load_ps(acc[r] + 16 * v), out, va, vb,
                                  beta != 0.0f, mk));
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

INGOT_AVX512 float dot(int64_t k, const float *x, const float *y) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 64 <= k; i += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16),
                         _mm512_loadu_ps(y + i + 16), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 32),
                         _mm512_loadu_ps(y + i + 32), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 48),
                         _mm512_loadu_ps(y + i + 48), s3);
  }
  for (; i < k; i += 16) {
    int64_t w = k - i < 16 ? k - i : 16;
    __mmask16 m = __mmask16((1u << w) - 1);
    s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i),
                         _mm512_maskz_loadu_ps(m, y + i), s0);
  }
  // Spelled out: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes,
                  _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  float t = 0;
  for (int i = 0; i < 16; ++i)
    t += lanes[i];
  return t;
}

} // namespace

const GemmKernelSet &avx512GemmKernels() {
  static const GemmKernelSet set{kMr,    kNr, micro12x32, micro12x32RowA,
                                 smallM, dot};
  return set;
}

} // namespace ingot::cpu
