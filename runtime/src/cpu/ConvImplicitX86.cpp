//===- ConvImplicitX86.cpp - AVX2 and AVX-512 implicit-conv tiles ---------===//
//
// The tiles of ConvImplicitTile.inc compiled twice: AVX-512 with 12 x 32
// tiles (24 zmm accumulators) and channel tiles of up to 6 positions x 64
// channels, and AVX2 with 6 x 16 (12 ymm; its 16 registers leave no room
// for a channel tile of more than 12 accumulators). Called only after
// CPUID reported the features (bestGemmIsa).
//
//===----------------------------------------------------------------------===//

#include "cpu/ConvImplicit.h"

#include <immintrin.h>

namespace ingot::cpu {

#if defined(__clang__) // clang ignores GCC's target pragma
#pragma clang attribute push(__attribute__((target("avx2,fma"))),              \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2implicit {
namespace {
struct Vec {
  using F = __m256;
  static constexpr int L = 8, kRows = 6;
  static F zero() { return _mm256_setzero_ps(); }
  static F loadu(const float *p) { return _mm256_loadu_ps(p); }
  static void storeu(float *p, F v) { _mm256_storeu_ps(p, v); }
  static F bcast(const float *p) { return _mm256_broadcast_ss(p); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
};
#include "cpu/ConvImplicitTile.inc"
} // namespace
ImplicitKernels kernels() { return {kMr, kNr, block}; }
} // namespace avx2implicit
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))),               \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
namespace avx512implicit {
namespace {
struct Vec {
  using F = __m512;
  static constexpr int L = 16, kRows = 12;
  static F zero() { return _mm512_setzero_ps(); }
  static F loadu(const float *p) { return _mm512_loadu_ps(p); }
  static F load(const float *p) { return _mm512_load_ps(p); }
  static void storeu(float *p, F v) { _mm512_storeu_ps(p, v); }
  static F bcast(const float *p) { return _mm512_set1_ps(*p); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
};
#define INGOT_IMPLICIT_CHANNEL_TILES 1
#include "cpu/ConvImplicitTile.inc"
#undef INGOT_IMPLICIT_CHANNEL_TILES
} // namespace
// GCC 12's unmasked AVX-512 shuffles pass an undefined vector as the
// masked-off source, which -Wuninitialized reports inside its headers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
/// Positions [0, n) x 16 channels of T (a position's channels together,
/// rows lds apart) into `channels` rows of y (ldd apart), + bias[c] when
/// given: a 16 x 16 transpose in registers, rows past n read but not
/// stored.
void transpose16(const float *t, int64_t lds, int n, int channels,
                 const float *bias, float *y, int64_t ldd) {
  __m512 r[16], u[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_loadu_ps(t + i * lds);
  // Pairs, then quads of 32-bit lanes; then 128-bit lanes twice.
  for (int i = 0; i < 16; i += 2) {
    u[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    u[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int j = 0; j < 2; ++j) {
      r[i + j] = _mm512_castpd_ps(_mm512_unpacklo_pd(
          _mm512_castps_pd(u[i + j]), _mm512_castps_pd(u[i + j + 2])));
      r[i + j + 2] = _mm512_castpd_ps(_mm512_unpackhi_pd(
          _mm512_castps_pd(u[i + j]), _mm512_castps_pd(u[i + j + 2])));
    }
  for (int i = 0; i < 16; i += 8)
    for (int j = 0; j < 4; ++j) {
      u[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0x88);
      u[i + j + 4] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(u[j], u[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(u[j], u[j + 8], 0xdd);
  }
  // r[...] now holds channel c in an order fixed by the shuffles above.
  static constexpr int kRowOf[16] = {0, 2,  1, 3,  4,  6,  5,  7,
                                     8, 10, 9, 11, 12, 14, 13, 15};
  const __mmask16 keep = __mmask16((1u << n) - 1);
  for (int i = 0; i < 16; ++i) {
    const int c = kRowOf[i];
    if (c >= channels)
      continue;
    __m512 v = r[i];
    if (bias)
      v = _mm512_add_ps(v, _mm512_set1_ps(bias[c]));
    _mm512_mask_storeu_ps(y + c * ldd, keep, v);
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
ImplicitKernels kernels() {
  return {kMr, kNr, block, Vec::L, channelBlock, transpose16};
}
} // namespace avx512implicit
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

ImplicitKernels implicitKernels(GemmIsa isa) {
  switch (isa) {
  case GemmIsa::Avx512:
    return avx512implicit::kernels();
  case GemmIsa::Avx2:
    return avx2implicit::kernels();
  default:
    return {};
  }
}

} // namespace ingot::cpu
