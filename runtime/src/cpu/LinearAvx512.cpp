//===- LinearAvx512.cpp - AVX-512F decode kernels of linear ---------------===//
//
// Compiled with per-function target attributes; only called after CPUID
// reported AVX-512F (see bestLinearKernels).
//
// "nk": a block of NB weight rows is streamed once against MT <= 4 rows of
// x, with MT x NB zmm accumulators (at most 16) so each loaded weight vector
// feeds MT FMAs. Rows of x beyond 4 re-read the block from L1, never from
// memory. bf16 widens by a shift and a mask of packed pairs (see nkBlock),
// f16 with vcvtph2ps; K tails are scalar.
//
// "kn": each weight row segment is loaded once and scaled into m f32
// accumulator rows held in L1, four k rows per pass to amortise their
// load/store; rows further ahead are prefetched. With many rows (prefill)
// register tiles replace the L1 accumulators, with the same per-element
// operations (see knTile). The "kn" kernels live in LinearAvx512Tiled.cpp.
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearAvx512.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ingot::cpu {
namespace {

/// Horizontal sum (not _mm512_reduce_add_ps, for the GCC 12 warning noted
/// at load16 in LinearAvx512.h).
INGOT_AVX512 inline float reduceAdd(__m512 v) {
  __m512 t = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));
  t = _mm512_add_ps(t, _mm512_maskz_shuffle_f32x4(0xffff, t, t, 0xb1));
  __m128 h = _mm512_maskz_extractf32x4_ps(0xf, t, 0);
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

/// y[m][j] = x[m]·w[j] (+ bias[j]) for m < MT, j < NB; x rows and w rows
/// are k long, y has row stride ldy. For bf16, `xs` is x with every run of
/// 32 values split into its even then its odd elements (splitPairs): one
/// 512-bit load of 32 bf16 weights then widens with a shift (the even
/// elements, low halves of the 32-bit lanes) and a mask (the odd ones),
/// half the work of a zero-extend per 16 weights.
///
/// The next block of weight rows is prefetched one line per row for each
/// line consumed: the block's rows are short runs that the hardware
/// prefetchers (which stop at page boundaries) pick up too late; this
/// doubled the f32 rate at m >= 2 and the bf16/f16 rate at m = 1.
template <WKind K, int MT, int NB>
INGOT_AVX512 void nkBlock(const float *x, const float *xs, int64_t k,
                          const typename WElem<K>::type *w, const float *bias,
                          float *y, int64_t ldy) {
  __m512 acc[MT][NB];
  for (int m = 0; m < MT; ++m)
    for (int j = 0; j < NB; ++j)
      acc[m][j] = _mm512_setzero_ps();
  int64_t kk = 0;
  if constexpr (K == WKind::BF16) {
    const __m512i hi = _mm512_set1_epi32(int32_t(0xffff0000u));
    for (; kk + 32 <= k; kk += 32) {
      __m512 xe[MT], xo[MT];
      for (int m = 0; m < MT; ++m) {
        xe[m] = _mm512_loadu_ps(xs + m * k + kk);
        xo[m] = _mm512_loadu_ps(xs + m * k + kk + 16);
      }
      for (int j = 0; j < NB; ++j) {
        prefetchAt(w, ((NB + j) * k + kk) * int64_t(sizeof(*w)));
        const __m512i raw = _mm512_loadu_si512(w + j * k + kk);
        const __m512 we =
            _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, raw, 16));
        const __m512 wo = _mm512_castsi512_ps(_mm512_and_si512(raw, hi));
        for (int m = 0; m < MT; ++m) {
          acc[m][j] = _mm512_fmadd_ps(xe[m], we, acc[m][j]);
          acc[m][j] = _mm512_fmadd_ps(xo[m], wo, acc[m][j]);
        }
      }
    }
  } else {
    for (; kk + 16 <= k; kk += 16) {
      __m512 xv[MT];
      for (int m = 0; m < MT; ++m)
        xv[m] = _mm512_loadu_ps(x + m * k + kk);
      for (int j = 0; j < NB; ++j) {
        if (sizeof(typename WElem<K>::type) == 4 || kk % 32 == 0)
          prefetchAt(w, ((NB + j) * k + kk) * int64_t(sizeof(*w)));
        const __m512 wv = load16<K>(w + j * k + kk);
        for (int m = 0; m < MT; ++m)
          acc[m][j] = _mm512_fmadd_ps(xv[m], wv, acc[m][j]);
      }
    }
  }
  for (int m = 0; m < MT; ++m)
    for (int j = 0; j < NB; ++j) {
      float s = reduceAdd(acc[m][j]);
      for (int64_t q = kk; q < k; ++q)
        s += x[m * k + q] * widenOne<K>(w + j * k + q);
      y[m * ldy + j] = bias ? s + bias[j] : s;
    }
}

/// Weight rows [n, n + NB) against every row of x, in tiles of 4 rows.
template <WKind K, int NB>
INGOT_AVX512 void nkRows(const LinearDecodeArgs &a, const float *xs,
                         int64_t n) {
  const auto *w = static_cast<const typename WElem<K>::type *>(a.w) + n * a.k;
  const float *bias = a.bias ? a.bias + n : nullptr;
  for (int64_t m0 = 0; m0 < a.m; m0 += 4) {
    const float *x = a.x + m0 * a.k, *xsm = xs + m0 * a.k;
    float *y = a.y + m0 * a.n + n;
    switch (std::min<int64_t>(4, a.m - m0)) {
    case 1:
      nkBlock<K, 1, NB>(x, xsm, a.k, w, bias, y, a.n);
      break;
    case 2:
      nkBlock<K, 2, NB>(x, xsm, a.k, w, bias, y, a.n);
      break;
    case 3:
      nkBlock<K, 3, NB>(x, xsm, a.k, w, bias, y, a.n);
      break;
    default:
      nkBlock<K, 4, NB>(x, xsm, a.k, w, bias, y, a.n);
      break;
    }
  }
}

thread_local std::vector<float> tlsSplitX;

template <WKind K>
INGOT_AVX512 void nkRange(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  const float *xs = a.x;
  if constexpr (K == WKind::BF16) {
    // Per call and thread: M*K floats against (n1 - n0)*K weights.
    tlsSplitX.resize(size_t(a.m * a.k));
    splitPairs(a.x, a.m, a.k, 32, tlsSplitX.data());
    xs = tlsSplitX.data();
  }
  int64_t n = n0;
  // Eight weight streams in flight when at most 16 accumulators result.
  if (a.m <= 2)
    for (; n + 8 <= n1; n += 8)
      nkRows<K, 8>(a, xs, n);
  for (; n + 4 <= n1; n += 4)
    nkRows<K, 4>(a, xs, n);
  for (; n < n1; ++n)
    nkRows<K, 1>(a, xs, n);
}

void nkAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.wType == DType::BF16)
    nkRange<WKind::BF16>(a, n0, n1);
  else if (a.wType == DType::F16)
    nkRange<WKind::F16>(a, n0, n1);
  else
    nkRange<WKind::F32>(a, n0, n1);
}

template <WKind K>
INGOT_AVX512 void widenRun(const void *src, int64_t count, float *dst) {
  const auto *s = static_cast<const typename WElem<K>::type *>(src);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm512_storeu_ps(dst + i, load16<K>(s + i));
  for (; i < count; ++i)
    dst[i] = widenOne<K>(s + i);
}

void widenAny(DType t, const void *src, int64_t count, float *dst) {
  if (t == DType::BF16)
    widenRun<WKind::BF16>(src, count, dst);
  else if (t == DType::F16)
    widenRun<WKind::F16>(src, count, dst);
  else
    std::memcpy(dst, src, size_t(count) * sizeof(float));
}

} // namespace

const LinearKernelSet &avx512LinearKernels() {
  static const LinearKernelSet set{nkAny, avx512KnAny, widenAny,
                                   avx512KnManyAny};
  return set;
}

} // namespace ingot::cpu
