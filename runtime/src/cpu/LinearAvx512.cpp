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
// "nk16" (packed) weights: one row of x streams a whole 16-row panel with
// 16 accumulators; up to 4 rows take the row-major block shapes inside a
// panel; with more, the panel is first copied into row-major rows (see
// nkRange), since the tiles of x re-read each block. Same sums throughout.
//
// "kn": each weight row segment is loaded once and scaled into m f32
// accumulator rows held in L1, four k rows per pass to amortise their
// load/store; rows further ahead are prefetched. With many rows (prefill)
// register tiles over packed weight panels replace the L1 accumulators,
// with the same per-element operations (see knPanelTile). The "kn" kernels
// live in LinearAvx512Tiled.cpp.
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearAvx512.h"
#include "cpu/HsumAvx512.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ingot::cpu {
namespace {

/// a·b + c rounded once. The scalar K tail is written with it explicitly:
/// left to the compiler, `s += a * b` was partly vectorised (products
/// rounded, then added in order) and partly contracted into FMAs, in a mix
/// that differed between instantiations of nkBlock, so a sum depended on
/// which block shape or weight layout computed it.
INGOT_AVX512 inline float fmaScalar(float a, float b, float c) {
  return _mm_cvtss_f32(
      _mm_mask_fmadd_ss(_mm_set_ss(a), 1, _mm_set_ss(b), _mm_set_ss(c)));
}

/// y[m][j] = x[m]·w[j] (+ bias[j]) for m < MT, j < NB; x rows are k long,
/// weight row j at w.at(j, ·) (row-major or "nk16", see NkRows), y has row
/// stride ldy. For bf16, `xs` is x with every run of 32 values split into
/// its even then its odd elements (splitPairs): one 512-bit load of 32 bf16
/// weights then widens with a shift (the even elements, low halves of the
/// 32-bit lanes) and a mask (the odd ones), half the work of a zero-extend
/// per 16 weights.
///
/// Row-major: the next block of weight rows is prefetched one line per row
/// for each line consumed: the block's rows are short runs that the
/// hardware prefetchers (which stop at page boundaries) pick up too late;
/// this doubled the f32 rate at m >= 2 and the bf16/f16 rate at m = 1.
/// Large blocks are fetched by the first tile of x rows only (see
/// nkFetchNext).
/// "nk16": each line is prefetched NkRows::aheadBytes on (a whole panel is
/// one stream; a part of one fetches its rows of the next panel).
template <WKind K, int MT, int NB, bool Packed>
INGOT_AVX512 void nkBlock(const float *x, const float *xs, int64_t k,
                          const NkRows<typename WElem<K>::type, Packed> &w,
                          const float *bias, float *y, int64_t ldy,
                          bool fetchNext) {
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
      const E *w0 = w.base(kk);
      const int64_t rs = w.stride(kk);
      for (int j = 0; j < NB; ++j) {
        prefetch(w0 + j * rs, j, kk);
        const __m512i raw = _mm512_loadu_si512(w0 + j * rs);
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
      const E *w0 = w.base(kk);
      const int64_t rs = w.stride(kk);
      for (int j = 0; j < NB; ++j) {
        if (fetchNext && (sizeof(E) == 4 || kk % 32 == 0))
          prefetch(w0 + j * rs, j, kk);
        const __m512 wv = load16<K>(w0 + j * rs);
        for (int m = 0; m < MT; ++m)
          acc[m][j] = _mm512_fmadd_ps(xv[m], wv, acc[m][j]);
      }
    }
  }
  // Sixteen sums in one tree pass (same bits as one hsum16 each).
  alignas(64) float sums[MT][NB];
  if constexpr (MT * NB == 16)
    _mm512_store_ps(&sums[0][0], hsum16x16(&acc[0][0]));
  else
    for (int m = 0; m < MT; ++m)
      for (int j = 0; j < NB; ++j)
        sums[m][j] = hsum16(acc[m][j]);
  for (int m = 0; m < MT; ++m)
    for (int j = 0; j < NB; ++j) {
      float s = sums[m][j];
      for (int64_t q = kk; q < k; ++q)
        s = fmaScalar(x[m * k + q], widenOne<K>(w.at(j, q)), s);
      y[m * ldy + j] = bias ? s + bias[j] : s;
    }
}

/// Weight rows [n, n + NB), read through `w`, against every row of x, in
/// tiles of 4 rows.
template <WKind K, int NB, bool Packed>
INGOT_AVX512 void nkRows(const LinearDecodeArgs &a, const float *xs, int64_t n,
                         const NkRows<typename WElem<K>::type, Packed> &w) {
  const float *bias = a.bias ? a.bias + n : nullptr;
  const int64_t blockBytes =
      NB * a.k * int64_t(sizeof(typename WElem<K>::type));
  for (int64_t m0 = 0; m0 < a.m; m0 += 4) {
    const bool fetch = nkFetchNext(m0, blockBytes);
    const float *x = a.x + m0 * a.k, *xsm = xs + m0 * a.k;
    float *y = a.y + m0 * a.n + n;
    switch (std::min<int64_t>(4, a.m - m0)) {
    case 1:
      nkBlock<K, 1, NB>(x, xsm, a.k, w, bias, y, a.n, fetch);
      break;
    case 2:
      nkBlock<K, 2, NB>(x, xsm, a.k, w, bias, y, a.n, fetch);
      break;
    case 3:
      nkBlock<K, 3, NB>(x, xsm, a.k, w, bias, y, a.n, fetch);
      break;
    default:
      nkBlock<K, 4, NB>(x, xsm, a.k, w, bias, y, a.n, fetch);
      break;
    }
  }
}

template <WKind K, int NB, bool Packed>
INGOT_AVX512 void nkRows(const LinearDecodeArgs &a, const float *xs,
                         int64_t n) {
  nkRows<K, NB, Packed>(
      a, xs, n, NkRows<typename WElem<K>::type, Packed>(a.w, n, a.n, a.k));
}

/// Weight rows [n, end) against every row of x (see nkRange).
template <WKind K, bool Packed>
INGOT_AVX512 void nkPiece(const LinearDecodeArgs &a, const float *xs, int64_t n,
                          int64_t end) {
  // A whole "nk16" panel as one stream when its 16 accumulators fit.
  if (Packed && a.m == 1)
    for (; n + 16 <= end; n += 16)
      nkRows<K, 16, Packed>(a, xs, n);
  // Eight weight streams in flight when at most 16 accumulators result.
  if (a.m <= 2)
    for (; n + 8 <= end; n += 8)
      nkRows<K, 8, Packed>(a, xs, n);
  for (; n + 4 <= end; n += 4)
    nkRows<K, 4, Packed>(a, xs, n);
  for (; n < end; ++n)
    nkRows<K, 1, Packed>(a, xs, n);
}

thread_local std::vector<float> tlsSplitX;
thread_local std::vector<uint8_t> tlsPanel;

template <WKind K, bool Packed>
INGOT_AVX512 void nkRange(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  using E = typename WElem<K>::type;
  const float *xs = a.x;
  if constexpr (K == WKind::BF16) {
    // Per call and thread: M*K floats against (n1 - n0)*K weights.
    tlsSplitX.resize(size_t(a.m * a.k));
    splitPairs(a.x, a.m, a.k, 32, tlsSplitX.data());
    xs = tlsSplitX.data();
  }
  forEachPanelPiece<Packed>(n0, n1, [&](int64_t n, int64_t end) {
    if constexpr (Packed) {
      // Several tiles of x re-read each block of rows; inside a panel a
      // block's lines lie 1 KiB apart (a quarter of the L1 sets), so
      // stream the panel into row-major rows once (it stays in L2) and
      // run the row-major blocks on those: the same sums.
      if (a.m > 4) {
        const int64_t p0 = n / kNk16PanelRows * kNk16PanelRows;
        const int64_t rows = std::min(kNk16PanelRows, a.n - p0);
        tlsPanel.resize(size_t(rows * a.k) * sizeof(E));
        E *buf = reinterpret_cast<E *>(tlsPanel.data());
        const E *panel = static_cast<const E *>(a.w) + p0 * a.k;
        unpackNk16Panel(panel, rows, a.k, buf);
        // The next panel's lines into L2 while this one is computed: the
        // copy above then runs at cache speed.
        const int64_t bytes = rows * a.k * int64_t(sizeof(E));
        if (end == p0 + rows && p0 + rows < a.n)
          for (int64_t off = 0; off < bytes; off += 64)
            _mm_prefetch(reinterpret_cast<const char *>(panel) + bytes + off,
                         _MM_HINT_T1);
        for (; n + 4 <= end; n += 4)
          nkRows<K, 4, false>(a, xs, n,
                              NkRows<E, false>(buf, n - p0, rows, a.k));
        for (; n < end; ++n)
          nkRows<K, 1, false>(a, xs, n,
                              NkRows<E, false>(buf, n - p0, rows, a.k));
        return;
      }
    }
    nkPiece<K, Packed>(a, xs, n, end);
  });
}

template <WKind K>
INGOT_AVX512 void nkRangeAny(const LinearDecodeArgs &a, int64_t n0,
                             int64_t n1) {
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
                                   avx512KnManyAny, avx512PackKn};
  return set;
}

} // namespace ingot::cpu
