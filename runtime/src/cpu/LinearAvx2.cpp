//===- LinearAvx2.cpp - AVX2+FMA+F16C decode kernels of linear ------------===//
//
// The AVX2 counterpart of LinearAvx512.cpp (same structure, 8 lanes); only
// called after CPUID reported AVX2, FMA and F16C (see bestLinearKernels).
// With 16 ymm registers the weight block is narrower: NB = 8 rows for one
// row of x, 4 for two, 2 for more, so accumulators + x vectors + one weight
// vector fit without spills.
//
//===----------------------------------------------------------------------===//

#include "cpu/Linear.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <vector>

#define INGOT_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace ingot::cpu {
namespace {

template <WKind K>
INGOT_AVX2 inline __m256 load8(const typename WElem<K>::type *p) {
  if constexpr (K == WKind::F32) {
    return _mm256_loadu_ps(p);
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    if constexpr (K == WKind::BF16)
      return _mm256_castsi256_ps(
          _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    else
      return _mm256_cvtph_ps(h);
  }
}

INGOT_AVX2 inline float reduceAdd(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

/// a·b + c rounded once: the scalar K tail uses it explicitly, so that no
/// instantiation of nkBlock rounds its products differently (see
/// LinearAvx512.cpp).
INGOT_AVX2 inline float fmaScalar(float a, float b, float c) {
  return _mm_cvtss_f32(
      _mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

/// y[m][j] = x[m]·w[j] (+ bias[j]) for m < MT, j < NB; x rows are k long,
/// weight row j at w.at(j, ·) (row-major or "nk16", see NkRows), y has row
/// stride ldy. bf16 uses the pair split of LinearAvx512.cpp with runs of
/// 16 (`xs`, see splitPairs). Row-major: the next block of weight rows is
/// prefetched a line per row per line consumed; "nk16": each line
/// NkRows::aheadBytes on.
template <WKind K, int MT, int NB, bool Packed>
INGOT_AVX2 void nkBlock(const float *x, const float *xs, int64_t k,
                        const NkRows<typename WElem<K>::type, Packed> &w,
                        const float *bias, float *y, int64_t ldy) {
  using E = typename WElem<K>::type;
  int64_t ahead = 0;
  if constexpr (Packed)
    ahead = w.aheadBytes(NB);
  auto prefetch = [&](const E *wj, int j, int64_t kk) {
    if constexpr (Packed)
      prefetchAt(wj, ahead);
    else
      prefetchAt(w.first, ((NB + j) * k + kk) * int64_t(sizeof(E)));
  };
  __m256 acc[MT][NB];
  for (int m = 0; m < MT; ++m)
    for (int j = 0; j < NB; ++j)
      acc[m][j] = _mm256_setzero_ps();
  int64_t kk = 0;
  if constexpr (K == WKind::BF16) {
    const __m256i hi = _mm256_set1_epi32(int32_t(0xffff0000u));
    for (; kk + 16 <= k; kk += 16) {
      __m256 xe[MT], xo[MT];
      for (int m = 0; m < MT; ++m) {
        xe[m] = _mm256_loadu_ps(xs + m * k + kk);
        xo[m] = _mm256_loadu_ps(xs + m * k + kk + 8);
      }
      const E *w0 = w.base(kk);
      const int64_t rs = w.stride(kk);
      for (int j = 0; j < NB; ++j) {
        if (kk % 32 == 0)
          prefetch(w0 + j * rs, j, kk);
        const __m256i raw =
            _mm256_loadu_si256(reinterpret_cast<const __m256i *>(w0 + j * rs));
        const __m256 we = _mm256_castsi256_ps(_mm256_slli_epi32(raw, 16));
        const __m256 wo = _mm256_castsi256_ps(_mm256_and_si256(raw, hi));
        for (int m = 0; m < MT; ++m) {
          acc[m][j] = _mm256_fmadd_ps(xe[m], we, acc[m][j]);
          acc[m][j] = _mm256_fmadd_ps(xo[m], wo, acc[m][j]);
        }
      }
    }
  } else {
    for (; kk + 8 <= k; kk += 8) {
      __m256 xv[MT];
      for (int m = 0; m < MT; ++m)
        xv[m] = _mm256_loadu_ps(x + m * k + kk);
      const E *w0 = w.base(kk);
      const int64_t rs = w.stride(kk);
      for (int j = 0; j < NB; ++j) {
        if (kk % int64_t(64 / sizeof(E)) == 0)
          prefetch(w0 + j * rs, j, kk);
        const __m256 wv = load8<K>(w0 + j * rs);
        for (int m = 0; m < MT; ++m)
          acc[m][j] = _mm256_fmadd_ps(xv[m], wv, acc[m][j]);
      }
    }
  }
  for (int m = 0; m < MT; ++m)
    for (int j = 0; j < NB; ++j) {
      float s = reduceAdd(acc[m][j]);
      for (int64_t q = kk; q < k; ++q)
        s = fmaScalar(x[m * k + q], widenOne<K>(w.at(j, q)), s);
      y[m * ldy + j] = bias ? s + bias[j] : s;
    }
}

/// Weight rows [n, n + NB) against every row of x, in tiles of 4 rows.
template <WKind K, int NB, bool Packed>
INGOT_AVX2 void nkRows(const LinearDecodeArgs &a, const float *xs, int64_t n) {
  const NkRows<typename WElem<K>::type, Packed> w(a.w, n, a.n, a.k);
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

template <WKind K, bool Packed>
INGOT_AVX2 void nkRange(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  const float *xs = a.x;
  if constexpr (K == WKind::BF16) {
    tlsSplitX.resize(size_t(a.m * a.k));
    splitPairs(a.x, a.m, a.k, 16, tlsSplitX.data());
    xs = tlsSplitX.data();
  }
  forEachPanelPiece<Packed>(n0, n1, [&](int64_t n, int64_t end) {
    if (a.m == 1)
      for (; n + 8 <= end; n += 8)
        nkRows<K, 8, Packed>(a, xs, n);
    if (a.m == 2)
      for (; n + 4 <= end; n += 4)
        nkRows<K, 4, Packed>(a, xs, n);
    for (; n + 2 <= end; n += 2)
      nkRows<K, 2, Packed>(a, xs, n);
    for (; n < end; ++n)
      nkRows<K, 1, Packed>(a, xs, n);
  });
}

/// One step of the "kn" kernel, as in LinearAvx512.cpp with 8 lanes.
template <WKind K> constexpr int kStepVecs = K == WKind::BF16 ? 2 : 1;
template <WKind K>
INGOT_AVX2 inline void widenStep(const typename WElem<K>::type *p,
                                 __m256 *out) {
  if constexpr (K == WKind::BF16) {
    const __m256i raw =
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
    out[0] = _mm256_castsi256_ps(_mm256_slli_epi32(raw, 16));
    out[1] = _mm256_castsi256_ps(
        _mm256_and_si256(raw, _mm256_set1_epi32(int32_t(0xffff0000u))));
  } else {
    out[0] = load8<K>(p);
  }
}

/// Columns [j0, j0 + nn) of y, nn <= linearKnMaxWidth(m): four weight rows
/// per pass, each step's weight vectors applied to all m accumulator rows.
template <WKind K>
INGOT_AVX2 void knChunk(const LinearDecodeArgs &a, int64_t j0, int64_t nn) {
  using E = typename WElem<K>::type;
  constexpr int NV = kStepVecs<K>;
  constexpr int64_t S = 8 * NV; // columns per step
  alignas(64) float accMem[kLinearKnAccFloats];
  const int64_t m = a.m, k = a.k, n = a.n;
  const int64_t stride = linearKnMaxWidth(m);
  float *acc[kLinearKnMaxRows];
  for (int64_t r = 0; r < m; ++r) {
    acc[r] = accMem + r * stride;
    std::fill(acc[r], acc[r] + nn, 0.0f);
  }
  const int64_t vEnd = nn / S * S;
  const E *w = static_cast<const E *>(a.w) + j0;
  int64_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    const E *w0 = w + kk * n;
    for (int64_t v = 0; v < vEnd; v += S) {
      // Rows kk+16.. are fetched ahead: each row is a short run of its own
      // page, too short for the hardware prefetchers to lock on.
      if (kk + 20 <= k && v % int64_t(64 / sizeof(E)) == 0)
        for (int q = 16; q < 20; ++q)
          _mm_prefetch(reinterpret_cast<const char *>(w0 + q * n + v),
                       _MM_HINT_T0);
      __m256 b[4][NV];
      for (int q = 0; q < 4; ++q)
        widenStep<K>(w0 + q * n + v, b[q]);
      for (int64_t r = 0; r < m; ++r) {
        const float *xr = a.x + r * k + kk;
        for (int u = 0; u < NV; ++u) {
          float *p = acc[r] + v + 8 * u;
          __m256 t = _mm256_load_ps(p);
          for (int q = 0; q < 4; ++q)
            t = _mm256_fmadd_ps(_mm256_set1_ps(xr[q]), b[q][u], t);
          _mm256_store_ps(p, t);
        }
      }
    }
    for (int64_t c = vEnd; c < nn; ++c) {
      float f[4];
      for (int q = 0; q < 4; ++q)
        f[q] = widenOne<K>(w0 + q * n + c);
      for (int64_t r = 0; r < m; ++r) {
        const float *xr = a.x + r * k + kk;
        acc[r][c] += xr[0] * f[0] + xr[1] * f[1] + xr[2] * f[2] + xr[3] * f[3];
      }
    }
  }
  for (; kk < k; ++kk) {
    const E *w0 = w + kk * n;
    for (int64_t v = 0; v < vEnd; v += S) {
      __m256 b[NV];
      widenStep<K>(w0 + v, b);
      for (int64_t r = 0; r < m; ++r)
        for (int u = 0; u < NV; ++u) {
          float *p = acc[r] + v + 8 * u;
          _mm256_store_ps(p, _mm256_fmadd_ps(_mm256_set1_ps(a.x[r * k + kk]),
                                             b[u], _mm256_load_ps(p)));
        }
    }
    for (int64_t c = vEnd; c < nn; ++c) {
      const float f0 = widenOne<K>(w0 + c);
      for (int64_t r = 0; r < m; ++r)
        acc[r][c] += a.x[r * k + kk] * f0;
    }
  }
  const float *bias = a.bias ? a.bias + j0 : nullptr;
  for (int64_t r = 0; r < m; ++r) {
    float *y = a.y + r * n + j0;
    for (int64_t v = 0; v < vEnd; v += S)
      for (int u = 0; u < NV; ++u)
        for (int64_t i = 0; i < 8; ++i) {
          const int64_t col = NV == 2 ? v + 2 * i + u : v + i;
          const float s = acc[r][v + 8 * u + i];
          y[col] = bias ? s + bias[col] : s;
        }
    for (int64_t c = vEnd; c < nn; ++c)
      y[c] = bias ? acc[r][c] + bias[c] : acc[r][c];
  }
}

template <WKind K>
INGOT_AVX2 void knRange(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  const int64_t width = linearKnMaxWidth(a.m);
  for (int64_t j = n0; j < n1; j += width)
    knChunk<K>(a, j, std::min(width, n1 - j));
}

template <WKind K>
INGOT_AVX2 void nkRangeAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.nk16)
    nkRange<K, true>(a, n0, n1);
  else
    nkRange<K, false>(a, n0, n1);
}

void nkAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.wType == DType::BF16)
    nkRangeAny<WKind::BF16>(a, n0, n1);
  else if (a.wType == DType::F16)
    nkRangeAny<WKind::F16>(a, n0, n1);
  else
    nkRangeAny<WKind::F32>(a, n0, n1);
}

void knAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.wType == DType::BF16)
    knRange<WKind::BF16>(a, n0, n1);
  else if (a.wType == DType::F16)
    knRange<WKind::F16>(a, n0, n1);
  else
    knRange<WKind::F32>(a, n0, n1);
}

template <WKind K>
INGOT_AVX2 void widenRun(const void *src, int64_t count, float *dst) {
  const auto *s = static_cast<const typename WElem<K>::type *>(src);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(dst + i, load8<K>(s + i));
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

const LinearKernelSet &avx2LinearKernels() {
  static const LinearKernelSet set{nkAny, knAny, widenAny, nullptr, nullptr};
  return set;
}

} // namespace ingot::cpu
