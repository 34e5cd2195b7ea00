//===- LinearQuantX86.cpp - AVX2 and AVX-512 quantised linear -------------===//
//
// The kernel of LinearQuantX86.inc compiled twice, for AVX2 + FMA + F16C
// with 8 f32 lanes and for AVX-512 with 16: each ISA's `Vec` holds the only
// differences (register width, the widening of stored values, the lane
// reduction). Called only after CPUID reported the features
// (bestQuantLinearKernels).
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearQuant.h"
#include "cpu/LinearQuantUtil.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <vector>

namespace ingot::cpu {

#if defined(__clang__) // clang ignores GCC's target pragma
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
namespace avx2q {
namespace {
struct Vec {
  using F = __m256;
  static constexpr int N = 8;
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F loadu(const float *p) { return _mm256_loadu_ps(p); }
  static void storeu(float *p, F v) { _mm256_storeu_ps(p, v); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  /// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), as LinearQuant.cpp's reduce.
  static float reduce(F v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
  }
  static __m128i load8(const uint8_t *p) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p));
  }
  static F widenInt8(const uint8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(load8(p)));
  }
  static F widenNibbles(const uint8_t *p, bool high) {
    const __m256i b = _mm256_cvtepu8_epi32(load8(p));
    return _mm256_cvtepi32_ps(high ? _mm256_srli_epi32(b, 4)
                                   : _mm256_and_si256(b, _mm256_set1_epi32(0x0f)));
  }
  /// The 32 values of an int4 run (16 bytes: values 0..15 the low
  /// nibbles, 16..31 the high ones) as 4 vectors in value order.
  static void widenRun32(const uint8_t *p, F out[4]) {
    const __m256i b0 = _mm256_cvtepu8_epi32(load8(p));
    const __m256i b1 = _mm256_cvtepu8_epi32(load8(p + 8));
    const __m256i mask = _mm256_set1_epi32(0x0f);
    out[0] = _mm256_cvtepi32_ps(_mm256_and_si256(b0, mask));
    out[1] = _mm256_cvtepi32_ps(_mm256_and_si256(b1, mask));
    out[2] = _mm256_cvtepi32_ps(_mm256_srli_epi32(b0, 4));
    out[3] = _mm256_cvtepi32_ps(_mm256_srli_epi32(b1, 4));
  }
  /// Each byte into the high half of a 16-bit lane (sign at bit 15); an
  /// arithmetic shift by one moves exponent and mantissa to bits 13..7
  /// (e4m3HalfBits) and copies the sign into bit 14, which the mask clears.
  static F widenE4m3(const uint8_t *p) {
    const __m128i hi = _mm_unpacklo_epi8(_mm_setzero_si128(), load8(p));
    return _mm256_cvtph_ps(
        _mm_and_si128(_mm_srai_epi16(hi, 1), _mm_set1_epi16(int16_t(0xbfff))));
  }
};
#include "cpu/LinearQuantX86.inc"
} // namespace
} // namespace avx2q
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__) // clang ignores GCC's target pragma
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")
#endif
namespace avx512q {
namespace {
struct Vec {
  using F = __m512;
  static constexpr int N = 16;
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F loadu(const float *p) { return _mm512_loadu_ps(p); }
  static void storeu(float *p, F v) { _mm512_storeu_ps(p, v); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  /// The two halves added lane by lane, then the 8-lane order.
  static float reduce(F v) {
    const __m256 upper = _mm256_castpd_ps(
        _mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    const __m256 s = _mm256_add_ps(_mm512_castps512_ps256(v), upper);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
  }
  static __m128i load16(const uint8_t *p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  }
  static F widenInt8(const uint8_t *p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(p)));
  }
  static F widenNibbles(const uint8_t *p, bool high) {
    const __m512i b = _mm512_cvtepu8_epi32(load16(p));
    return _mm512_cvtepi32_ps(high ? _mm512_srli_epi32(b, 4)
                                   : _mm512_and_si512(b, _mm512_set1_epi32(0x0f)));
  }
  static void widenRun32(const uint8_t *p, F out[2]) {
    const __m512i b = _mm512_cvtepu8_epi32(load16(p));
    out[0] = _mm512_cvtepi32_ps(_mm512_and_si512(b, _mm512_set1_epi32(0x0f)));
    out[1] = _mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4));
  }
  static F widenE4m3(const uint8_t *p) {
    const __m256i hi = _mm256_slli_epi16(_mm256_cvtepu8_epi16(load16(p)), 8);
    return _mm512_cvtph_ps(_mm256_and_si256(
        _mm256_srai_epi16(hi, 1), _mm256_set1_epi16(int16_t(0xbfff))));
  }
};
#include "cpu/LinearQuantX86.inc"
} // namespace
} // namespace avx512q
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

const QuantLinearKernels &avx2QuantLinearKernels() {
  static const QuantLinearKernels set{avx2q::nk, "avx2", 8};
  return set;
}

const QuantLinearKernels &avx512QuantLinearKernels() {
  static const QuantLinearKernels set{avx512q::nk, "avx512", 16};
  return set;
}

} // namespace ingot::cpu
