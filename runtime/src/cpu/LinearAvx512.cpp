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
// operations (see knTile).
//
//===----------------------------------------------------------------------===//

#include "cpu/Linear.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <vector>

#define INGOT_AVX512 __attribute__((target("avx512f")))

namespace ingot::cpu {
namespace {

template <WKind K>
INGOT_AVX512 inline __m512 load16(const typename WElem<K>::type *p) {
  if constexpr (K == WKind::F32) {
    return _mm512_loadu_ps(p);
  } else {
    // The all-ones maskz forms: the plain ones start from an "undefined"
    // register that GCC 12 warns about.
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
    if constexpr (K == WKind::BF16)
      return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(
          0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
    else
      return _mm512_maskz_cvtph_ps(0xffff, h);
  }
}

/// Horizontal sum (not _mm512_reduce_add_ps, for the same GCC 12 warning).
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

/// One step of the "kn" kernel: NV vectors of widened weights from
/// NV * 16 consecutive columns. bf16 gives the even columns, then the odd
/// ones (the pair split of nkBlock); the accumulators keep that order and
/// knChunk restores the column order when it stores.
template <WKind K> constexpr int kStepVecs = K == WKind::BF16 ? 2 : 1;
template <WKind K>
INGOT_AVX512 inline void widenStep(const typename WElem<K>::type *p,
                                   __m512 *out) {
  if constexpr (K == WKind::BF16) {
    const __m512i raw = _mm512_loadu_si512(p);
    out[0] = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, raw, 16));
    out[1] = _mm512_castsi512_ps(
        _mm512_and_si512(raw, _mm512_set1_epi32(int32_t(0xffff0000u))));
  } else {
    out[0] = load16<K>(p);
  }
}

/// Columns [j0, j0 + nn) of y, nn <= linearKnMaxWidth(m): four weight rows
/// per pass, each step's weight vectors applied to all m accumulator rows.
template <WKind K>
INGOT_AVX512 void knChunk(const LinearDecodeArgs &a, int64_t j0, int64_t nn) {
  using E = typename WElem<K>::type;
  constexpr int NV = kStepVecs<K>;
  constexpr int64_t S = 16 * NV; // columns per step
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
      __m512 b[4][NV];
      for (int q = 0; q < 4; ++q)
        widenStep<K>(w0 + q * n + v, b[q]);
      for (int64_t r = 0; r < m; ++r) {
        const float *xr = a.x + r * k + kk;
        for (int u = 0; u < NV; ++u) {
          float *p = acc[r] + v + 16 * u;
          __m512 t = _mm512_load_ps(p);
          for (int q = 0; q < 4; ++q)
            t = _mm512_fmadd_ps(_mm512_set1_ps(xr[q]), b[q][u], t);
          _mm512_store_ps(p, t);
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
      __m512 b[NV];
      widenStep<K>(w0 + v, b);
      for (int64_t r = 0; r < m; ++r)
        for (int u = 0; u < NV; ++u) {
          float *p = acc[r] + v + 16 * u;
          _mm512_store_ps(p, _mm512_fmadd_ps(_mm512_set1_ps(a.x[r * k + kk]),
                                             b[u], _mm512_load_ps(p)));
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
        for (int64_t i = 0; i < 16; ++i) {
          const int64_t col = NV == 2 ? v + 2 * i + u : v + i;
          const float s = acc[r][v + 16 * u + i];
          y[col] = bias ? s + bias[col] : s;
        }
    for (int64_t c = vEnd; c < nn; ++c)
      y[c] = bias ? acc[r][c] + bias[c] : acc[r][c];
  }
}

template <WKind K>
INGOT_AVX512 void knRange(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  const int64_t width = linearKnMaxWidth(a.m);
  for (int64_t j = n0; j < n1; j += width)
    knChunk<K>(a, j, std::min(width, n1 - j));
}

/// The "kn" kernel for many rows (prefill): MR rows by STEPS widening steps
/// of columns held in registers for all of K, so each weight vector feeds
/// MR FMAs and no accumulator goes through memory. Every accumulator takes
/// exactly knChunk's operations on a vector column (FMAs from zero, k
/// ascending, then the bias), so a row's bits do not depend on which of the
/// two ran it. `x` and `y` point at the tile's first row.
template <WKind K, int MR, int STEPS>
INGOT_AVX512 void knTile(const LinearDecodeArgs &a, const float *x, float *y,
                         int64_t c) {
  using E = typename WElem<K>::type;
  constexpr int NV = kStepVecs<K>;
  constexpr int64_t S = 16 * NV;
  __m512 acc[MR][STEPS][NV];
  for (int r = 0; r < MR; ++r)
    for (int s = 0; s < STEPS; ++s)
      for (int u = 0; u < NV; ++u)
        acc[r][s][u] = _mm512_setzero_ps();
  const E *w = static_cast<const E *>(a.w) + c;
  for (int64_t kk = 0; kk < a.k; ++kk) {
    __m512 b[STEPS][NV];
    for (int s = 0; s < STEPS; ++s)
      widenStep<K>(w + kk * a.n + s * S, b[s]);
    for (int r = 0; r < MR; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * a.k + kk]);
      for (int s = 0; s < STEPS; ++s)
        for (int u = 0; u < NV; ++u)
          acc[r][s][u] = _mm512_fmadd_ps(xv, b[s][u], acc[r][s][u]);
    }
  }
  alignas(64) float out[16];
  for (int r = 0; r < MR; ++r)
    for (int s = 0; s < STEPS; ++s)
      for (int u = 0; u < NV; ++u) {
        _mm512_store_ps(out, acc[r][s][u]);
        for (int64_t i = 0; i < 16; ++i) {
          const int64_t col = c + s * S + (NV == 2 ? 2 * i + u : i);
          y[r * a.n + col] = a.bias ? out[i] + a.bias[col] : out[i];
        }
      }
}

/// knTile over all rows of x for the columns at `c`.
template <WKind K, int STEPS>
INGOT_AVX512 void knTileRows(const LinearDecodeArgs &a, int64_t c) {
  int64_t r = 0;
  for (; r + 8 <= a.m; r += 8)
    knTile<K, 8, STEPS>(a, a.x + r * a.k, a.y + r * a.n, c);
  for (; r + 4 <= a.m; r += 4)
    knTile<K, 4, STEPS>(a, a.x + r * a.k, a.y + r * a.n, c);
  for (; r < a.m; ++r)
    knTile<K, 1, STEPS>(a, a.x + r * a.k, a.y + r * a.n, c);
}

/// "kn" for any number of rows: register tiles on the columns that knChunk
/// treats as vectors (below n rounded down to a step), knChunk on groups
/// of rows for the tail columns, so every column keeps its treatment.
template <WKind K>
INGOT_AVX512 void knManyRange(const LinearDecodeArgs &a, int64_t n0,
                              int64_t n1) {
  constexpr int64_t S = 16 * kStepVecs<K>;
  constexpr int STEPS = S == 16 ? 2 : 1; // 32 columns a tile
  const int64_t vEnd = std::clamp(a.n / S * S, n0, n1);
  int64_t c = n0;
  for (; c + STEPS * S <= vEnd; c += STEPS * S)
    knTileRows<K, STEPS>(a, c);
  for (; c < vEnd; c += S)
    knTileRows<K, 1>(a, c);
  for (int64_t r = 0; r < a.m && vEnd < n1; r += kLinearKnMaxRows) {
    LinearDecodeArgs g = a;
    g.m = std::min(kLinearKnMaxRows, a.m - r);
    g.x = a.x + r * a.k;
    g.y = a.y + r * a.n;
    knChunk<K>(g, vEnd, n1 - vEnd);
  }
}

void knManyAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.wType == DType::BF16)
    knManyRange<WKind::BF16>(a, n0, n1);
  else if (a.wType == DType::F16)
    knManyRange<WKind::F16>(a, n0, n1);
  else
    knManyRange<WKind::F32>(a, n0, n1);
}

void nkAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.wType == DType::BF16)
    nkRange<WKind::BF16>(a, n0, n1);
  else if (a.wType == DType::F16)
    nkRange<WKind::F16>(a, n0, n1);
  else
    nkRange<WKind::F32>(a, n0, n1);
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
  static const LinearKernelSet set{nkAny, knAny, widenAny, knManyAny};
  return set;
}

} // namespace ingot::cpu
