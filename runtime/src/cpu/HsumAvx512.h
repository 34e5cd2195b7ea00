//===- HsumAvx512.h - Horizontal sums of zmm vectors, one fixed tree -*- C++
//-*-===//
//
// The dot products of linear's "nk" kernels and of attention's scores end
// in a horizontal sum of 16 lanes, and batch invariance needs that sum to
// have the same bits wherever it runs. Both functions here add lanes in
// one tree: lanes 8 apart, then 4, then 2, then neighbours, i.e.
//   sum = (a0 + a2) + (a1 + a3),  a_i = (x_i + x_i+8) + (x_i+4 + x_i+12).
// Float addition is commutative, so only the pairing fixes the bits, and
// hsum16x16 reproduces it for 16 vectors at once with about three
// operations per sum instead of ten.
//
// Only called after CPUID reported AVX-512F.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <immintrin.h>

namespace ingot::cpu {

/// Horizontal sum (through maskz forms: GCC 12 warns about the "undefined"
/// registers that _mm512_reduce_add_ps and the plain forms start from).
__attribute__((target("avx512f"))) inline float hsum16(__m512 v) {
  __m512 t = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));
  t = _mm512_add_ps(t, _mm512_maskz_shuffle_f32x4(0xffff, t, t, 0xb1));
  __m128 h = _mm512_maskz_extractf32x4_ps(0xf, t, 0);
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

/// Lane p of the result is hsum16(v[p]), bit for bit.
__attribute__((target("avx512f"))) inline __m512 hsum16x16(const __m512 *v) {
  // The four stages below leave sum(in[4l + b]) in lane 4b + l; read the
  // inputs transposed so that lane p gets v[p].
  // Unrolled in full, so that the arrays stay in registers.
  __m512 in[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    in[i] = v[(i & 3) * 4 + (i >> 2)];
  // Lanes 8 apart: [a.lo8 + a.hi8 | b.lo8 + b.hi8] for pairs (a, b).
  __m512 e[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i)
    e[i] = _mm512_add_ps(
        _mm512_maskz_shuffle_f32x4(0xffff, in[2 * i], in[2 * i + 1], 0x44),
        _mm512_maskz_shuffle_f32x4(0xffff, in[2 * i], in[2 * i + 1], 0xee));
  // Lanes 4 apart within each half: 128-bit block q of f[i] holds one
  // input's four partial sums, in input order.
  __m512 f[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i)
    f[i] = _mm512_add_ps(
        _mm512_maskz_shuffle_f32x4(0xffff, e[2 * i], e[2 * i + 1], 0x88),
        _mm512_maskz_shuffle_f32x4(0xffff, e[2 * i], e[2 * i + 1], 0xdd));
  // Lanes 2 apart: per block [f_a: a0+a2, a1+a3 | f_b: a0+a2, a1+a3].
  __m512 g[2];
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    const __m512d a = _mm512_castps_pd(f[2 * i]);
    const __m512d b = _mm512_castps_pd(f[2 * i + 1]);
    g[i] =
        _mm512_add_ps(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, a, b)),
                      _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, a, b)));
  }
  // Neighbours: per block [f0, f1, f2, f3]'s (a0+a2) + (a1+a3).
  return _mm512_add_ps(
      _mm512_maskz_shuffle_ps(0xffff, g[0], g[1], _MM_SHUFFLE(2, 0, 2, 0)),
      _mm512_maskz_shuffle_ps(0xffff, g[0], g[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

} // namespace ingot::cpu
