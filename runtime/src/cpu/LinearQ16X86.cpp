//===- LinearQ16X86.cpp - AVX2 and AVX-512 VNNI "q16" linear --------------===//
//
// The kernel of LinearQ16X86.inc compiled twice: for AVX-512 VNNI with a
// 16-lane vector per panel (one vpdpbusd is 64 multiply-adds), and for
// AVX2 with two 8-lane halves, where vpmaddubsw + vpmaddwd stand in for
// the dot product (exact: a pair of products stays below 2^15, the q8
// weights entering as |w| with w's sign moved onto x). Called only after
// CPUID reported the features (bestQ16LinearKernels).
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearQ16.h"

#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

#include <cstring>
#include <immintrin.h>

namespace ingot::cpu {
namespace {
inline int32_t load4(const int8_t *p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
} // namespace

#if defined(__clang__) // clang ignores GCC's target pragma
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))),         \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
namespace avx2q16 {
namespace {
struct Vec {
  using F = __m256;
  using I = __m256i;
  static constexpr int L = 8;
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static I set1i(int32_t v) { return _mm256_set1_epi32(v); }
  static F loadu(const float *p) { return _mm256_loadu_ps(p); }
  static void storeu(float *p, F v) { _mm256_storeu_ps(p, v); }
  static I loadi(const uint8_t *p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
  }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static I addi(I a, I b) { return _mm256_add_epi32(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F toFloat(I v) { return _mm256_cvtepi32_ps(v); }
  static F halves(const uint8_t *p) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  static I bcast4(const int8_t *p) { return _mm256_set1_epi32(load4(p)); }
  static I lowNibbles(I v) {
    return _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
  }
  static I highNibbles(I v) {
    return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f));
  }
  static I dotUnsigned(I acc, I u, I s) {
    const I pairs = _mm256_maddubs_epi16(u, s);
    return _mm256_add_epi32(acc,
                            _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  static I dotSigned(I acc, I w, I x) {
    return dotUnsigned(acc, _mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
  }
};
#include "cpu/LinearQ16X86.inc"
} // namespace
} // namespace avx2q16
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__) // clang ignores GCC's target pragma
#pragma clang attribute push(                                                  \
    __attribute__((                                                            \
        target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni"))),        \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
#endif
namespace avx512q16 {
namespace {
struct Vec {
  using F = __m512;
  using I = __m512i;
  static constexpr int L = 16;
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static I set1i(int32_t v) { return _mm512_set1_epi32(v); }
  static F loadu(const float *p) { return _mm512_loadu_ps(p); }
  static void storeu(float *p, F v) { _mm512_storeu_ps(p, v); }
  static I loadi(const uint8_t *p) { return _mm512_loadu_si512(p); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static I addi(I a, I b) { return _mm512_add_epi32(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F toFloat(I v) { return _mm512_cvtepi32_ps(v); }
  static F halves(const uint8_t *p) {
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  }
  static I bcast4(const int8_t *p) { return _mm512_set1_epi32(load4(p)); }
  static I lowNibbles(I v) {
    return _mm512_and_si512(v, _mm512_set1_epi8(0x0f));
  }
  static I highNibbles(I v) {
    return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f));
  }
  static I dotUnsigned(I acc, I u, I s) {
    return _mm512_dpbusd_epi32(acc, u, s);
  }
  /// |w| times x with w's sign: the same products, u8 times s8.
  static I dotSigned(I acc, I w, I x) {
    const __mmask64 negative = _mm512_movepi8_mask(w);
    const I signedX =
        _mm512_mask_sub_epi8(x, negative, _mm512_setzero_si512(), x);
    return _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(w), signedX);
  }
};
#include "cpu/LinearQ16X86.inc"
} // namespace
} // namespace avx512q16
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

const Q16LinearKernels &avx2Q16LinearKernels() {
  static const Q16LinearKernels set{avx2q16::nk, "avx2"};
  return set;
}

const Q16LinearKernels &avx512VnniQ16LinearKernels() {
  static const Q16LinearKernels set{avx512q16::nk, "avx512vnni"};
  return set;
}

} // namespace ingot::cpu
