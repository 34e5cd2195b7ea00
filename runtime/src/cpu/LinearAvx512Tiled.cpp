//===- LinearAvx512Tiled.cpp - AVX-512F "kn" kernels of linear ----------===//
//
// The "kn" half of LinearAvx512.cpp (see the description there): the
// L1-accumulator kernel for few rows (knChunk) and the register-tiled one
// for many rows (knPanelTile over packed weight panels), which shares
// knChunk's per-element operations. On BERT's [128, 384] x [384, 1536]
// packing took the tiled kernel from 120 to 155 GFLOP/s on 2 threads.
// Compiled with per-function target attributes; only called after CPUID
// reported AVX-512F.
//
//===----------------------------------------------------------------------===//
#include "cpu/LinearAvx512.h"

#include <algorithm>
#include <cstring>

namespace ingot::cpu {
namespace {

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

/// Rows of K per packed weight panel: a 32-column panel of f32 (32 KiB)
/// stays in L1 while every row tile of x passes over it.
constexpr int64_t kKnPanelK = 256;
constexpr int64_t kKnTileCols = 32;
constexpr int kKnTileRows = 12;

/// Columns [c, c + cols) of rows [k0, k0 + kc) of W, widened to f32 in
/// column order, kKnTileCols floats a row (cols is 16 or 32). Packing
/// makes the panel one contiguous run: read in place, its rows lie N
/// floats apart, which for N = 384 or 1536 maps them onto a few L1 sets.
template <WKind K>
INGOT_AVX512 void packKnPanel(const LinearDecodeArgs &a, int64_t k0, int64_t kc,
                              int64_t c, int64_t cols, float *panel) {
  using E = typename WElem<K>::type;
  const E *w = static_cast<const E *>(a.w) + k0 * a.n + c;
  for (int64_t kk = 0; kk < kc; ++kk)
    for (int64_t j = 0; j < cols; j += 16)
      _mm512_store_ps(panel + kk * kKnTileCols + j,
                      load16<K>(w + kk * a.n + j));
}

/// Rows [0, R) from x (row stride k) times a packed panel of kc rows, on
/// top of y (or from zero when `first`), NV vectors of columns. Each
/// accumulator takes knChunk's operations on its column: FMAs in k order
/// from zero, stored and reloaded exactly between panels, then the bias
/// after the last one, so a row's bits do not depend on which kernel ran.
template <int R, int NV>
INGOT_AVX512 void knPanelTile(const float *x, int64_t k, const float *panel,
                              int64_t kc, float *y, int64_t n,
                              const float *bias, bool first, bool last) {
  __m512 acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NV; ++u)
      acc[r][u] =
          first ? _mm512_setzero_ps() : _mm512_loadu_ps(y + r * n + 16 * u);
  for (int64_t kk = 0; kk < kc; ++kk) {
    __m512 b[NV];
    for (int u = 0; u < NV; ++u)
      b[u] = _mm512_load_ps(panel + kk * kKnTileCols + 16 * u);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * k + kk]);
      for (int u = 0; u < NV; ++u)
        acc[r][u] = _mm512_fmadd_ps(xv, b[u], acc[r][u]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NV; ++u) {
      __m512 v = acc[r][u];
      if (last && bias)
        v = _mm512_add_ps(v, _mm512_loadu_ps(bias + 16 * u));
      _mm512_storeu_ps(y + r * n + 16 * u, v);
    }
}

/// All m rows of x over one packed panel, kKnTileRows at a time.
template <int NV>
INGOT_AVX512 void knPanelRows(const LinearDecodeArgs &a, int64_t k0, int64_t kc,
                              int64_t c, const float *panel) {
  using TileFn = void (*)(const float *, int64_t, const float *, int64_t,
                          float *, int64_t, const float *, bool, bool);
  static constexpr TileFn kTiles[kKnTileRows + 1] = {nullptr,
                                                     knPanelTile<1, NV>,
                                                     knPanelTile<2, NV>,
                                                     knPanelTile<3, NV>,
                                                     knPanelTile<4, NV>,
                                                     knPanelTile<5, NV>,
                                                     knPanelTile<6, NV>,
                                                     knPanelTile<7, NV>,
                                                     knPanelTile<8, NV>,
                                                     knPanelTile<9, NV>,
                                                     knPanelTile<10, NV>,
                                                     knPanelTile<11, NV>,
                                                     knPanelTile<12, NV>};
  const bool first = k0 == 0, last = k0 + kc == a.k;
  const float *bias = a.bias ? a.bias + c : nullptr;
  for (int64_t r = 0; r < a.m; r += kKnTileRows) {
    const int64_t rows = std::min<int64_t>(kKnTileRows, a.m - r);
    kTiles[rows](a.x + r * a.k + k0, a.k, panel, kc, a.y + r * a.n + c, a.n,
                 bias, first, last);
  }
}

/// "kn" for any number of rows: packed panels on the columns that knChunk
/// treats as vectors (below n rounded down to a step), knChunk on groups
/// of rows for the tail columns, so every column keeps its treatment.
template <WKind K>
INGOT_AVX512 void knManyRange(const LinearDecodeArgs &a, int64_t n0,
                              int64_t n1) {
  constexpr int64_t S = 16 * kStepVecs<K>;
  const int64_t vEnd = std::clamp(a.n / S * S, n0, n1);
  alignas(64) float own[kKnPanelK * kKnTileCols];
  for (int64_t c = n0; c < vEnd; c += kKnTileCols) {
    const int64_t cols = std::min(kKnTileCols, vEnd - c); // 32 or 16
    for (int64_t k0 = 0; k0 < a.k; k0 += kKnPanelK) {
      const int64_t kc = std::min(kKnPanelK, a.k - k0);
      const float *panel = own;
      if (a.knPanels) // c is a multiple of 64: chunks start there
        panel = a.knPanels + (c / kKnTileCols * a.k + k0) * kKnTileCols;
      else
        packKnPanel<K>(a, k0, kc, c, cols, own);
      if (cols == kKnTileCols)
        knPanelRows<2>(a, k0, kc, c, panel);
      else
        knPanelRows<1>(a, k0, kc, c, panel);
    }
  }
  for (int64_t r = 0; r < a.m && vEnd < n1; r += kLinearKnMaxRows) {
    LinearDecodeArgs g = a;
    g.m = std::min(kLinearKnMaxRows, a.m - r);
    g.x = a.x + r * a.k;
    g.y = a.y + r * a.n;
    knChunk<K>(g, vEnd, n1 - vEnd);
  }
}

/// Every panel knManyRange packs, in order: panel c / 32 holds all k rows
/// of its columns, kKnTileCols floats a row (a last 16-column panel
/// leaves the rest of each row zero).
template <WKind K> AlignedFloats packKnAll(const LinearDecodeArgs &a) {
  constexpr int64_t S = 16 * kStepVecs<K>;
  const int64_t vEnd = a.n / S * S;
  AlignedFloats panels(
      size_t((vEnd + kKnTileCols - 1) / kKnTileCols * a.k * kKnTileCols));
  for (int64_t c = 0; c < vEnd; c += kKnTileCols)
    for (int64_t k0 = 0; k0 < a.k; k0 += kKnPanelK)
      packKnPanel<K>(a, k0, std::min(kKnPanelK, a.k - k0), c,
                     std::min(kKnTileCols, vEnd - c),
                     panels.data() +
                         (c / kKnTileCols * a.k + k0) * kKnTileCols);
  return panels;
}

} // namespace

AlignedFloats avx512PackKn(const LinearDecodeArgs &a) {
  if (a.wType == DType::BF16)
    return packKnAll<WKind::BF16>(a);
  if (a.wType == DType::F16)
    return packKnAll<WKind::F16>(a);
  return packKnAll<WKind::F32>(a);
}

void avx512KnManyAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.wType == DType::BF16)
    knManyRange<WKind::BF16>(a, n0, n1);
  else if (a.wType == DType::F16)
    knManyRange<WKind::F16>(a, n0, n1);
  else
    knManyRange<WKind::F32>(a, n0, n1);
}

void avx512KnAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  if (a.wType == DType::BF16)
    knRange<WKind::BF16>(a, n0, n1);
  else if (a.wType == DType::F16)
    knRange<WKind::F16>(a, n0, n1);
  else
    knRange<WKind::F32>(a, n0, n1);
}

} // namespace ingot::cpu
