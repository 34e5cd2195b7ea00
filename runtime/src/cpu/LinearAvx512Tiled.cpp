//===- LinearAvx512Tiled.cpp - AVX-512F "kn" kernels of linear ----------===//
//
// The "kn" half of LinearAvx512.cpp (see the description there): the
// L1-accumulator kernel for few rows (knChunk) and the register-tiled one
// for many rows (knTile), which shares knChunk's per-element operations.
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

} // namespace

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
