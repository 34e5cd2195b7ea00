//===- LinearQ16X86.cpp - AVX2 and AVX-512 VNNI "q16" linear --------------===//
//
// The kernel of LinearQ16X86.inc compiled twice: for AVX-512 VNNI with a
// 16-lane vector per panel (one vpdpbusd is 64 multiply-adds, the q8
// weights' stored w + 128 its unsigned operand), and for AVX2 with two
// 8-lane halves, where vpmaddubsw + vpmaddwd stand in for the dot product
// (exact: a pair of products stays below 2^15, the q8 weights entering
// as |w| with w's sign moved onto x); and the AVX2 activation quantiser
// both sets use. Called only after
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
  static constexpr bool kNibblePairs16 = true;
  static I pairs16(I u, I s) { return _mm256_maddubs_epi16(u, s); }
  static I add16(I a, I b) { return _mm256_add_epi16(a, b); }
  static I widen16(I v) { return _mm256_madd_epi16(v, _mm256_set1_epi16(1)); }
  static I dotUnsigned(I acc, I u, I s) {
    return _mm256_add_epi32(acc, widen16(pairs16(u, s)));
  }
  // maddubs saturates pairs of u8 x s8 products in 16 bits: w + 128 up to
  // 255 times 127 twice would not fit, so q8 takes w back and moves its
  // sign onto x: |w| x (±x), at most 2 * 128 * 127 < 2^15 a pair.
  static constexpr bool kQ8Biased = false;
  static I dotQ8(I acc, I stored, const int8_t *x4) {
    const I w = _mm256_xor_si256(stored, _mm256_set1_epi8(char(0x80)));
    return dotUnsigned(acc, _mm256_abs_epi8(w),
                       _mm256_sign_epi8(bcast4(x4), w));
  }
};
#include "cpu/LinearQ16X86.inc"

/// Largest |v| of 32 floats (NaN-free input gives scalar std::max's value).
float blockAbsMax(const __m256 (&f)[4]) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 m = _mm256_max_ps(
      _mm256_max_ps(_mm256_andnot_ps(sign, f[0]), _mm256_andnot_ps(sign, f[1])),
      _mm256_max_ps(_mm256_andnot_ps(sign, f[2]),
                    _mm256_andnot_ps(sign, f[3])));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  return _mm_cvtss_f32(h);
}

/// quantizeRowsQ8's arithmetic 32 values at a time: the same product,
/// round-to-nearest-even and clamp, so the same bytes.
void quantizeRows(const float *x, int64_t r0, int64_t r1, QuantizedRows &out) {
  const int64_t k = out.k, blocks = k / kQ16Block;
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  // packs interleaves 128-bit lanes; this puts the 4-byte groups back.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const float *v = x + r * k + b * kQ16Block;
      __m256 f[4];
      for (int i = 0; i < 4; ++i)
        f[i] = _mm256_loadu_ps(v + 8 * i);
      const float amax = blockAbsMax(f);
      const __m256 inv = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
      __m256i q[4];
      for (int i = 0; i < 4; ++i) {
        const __m256 t =
            _mm256_round_ps(_mm256_mul_ps(f[i], inv),
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q[i] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(t, lo), hi));
      }
      const __m256i bytes = _mm256_permutevar8x32_epi32(
          _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]),
                             _mm256_packs_epi32(q[2], q[3])),
          order);
      _mm256_storeu_si256(
          reinterpret_cast<__m256i *>(out.q.data() + r * k + b * kQ16Block),
          bytes);
      const __m256i s4 = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]),
                                          _mm256_add_epi32(q[2], q[3]));
      __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s4),
                                _mm256_extracti128_si256(s4, 1));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
      s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
      out.d[size_t(r * blocks + b)] = amax / 127.0f;
      out.sum[size_t(r * blocks + b)] = _mm_cvtsi128_si32(s);
    }
}
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
  // maskz forms: GCC 12 warns about the "undefined" registers that the
  // plain forms of these start from once they are inlined into big tiles.
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F toFloat(I v) { return _mm512_maskz_cvtepi32_ps(0xffff, v); }
  static F halves(const uint8_t *p) {
    return _mm512_maskz_cvtph_ps(
        0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  }
  static I bcast4(const int8_t *p) { return _mm512_set1_epi32(load4(p)); }
  static I lowNibbles(I v) {
    return _mm512_and_si512(v, _mm512_set1_epi8(0x0f));
  }
  static I highNibbles(I v) {
    return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f));
  }
  // vpdpbusd already sums into 32 bits in one instruction.
  static constexpr bool kNibblePairs16 = false;
  static I pairs16(I, I) { return _mm512_setzero_si512(); }
  static I add16(I a, I) { return a; }
  static I widen16(I v) { return v; }
  static I dotUnsigned(I acc, I u, I s) {
    return _mm512_dpbusd_epi32(acc, u, s);
  }
  /// The stored w + 128 times x as they are: Σ w·x + 128·Σ x, the
  /// second term taken off from x's block sum.
  static constexpr bool kQ8Biased = true;
  static I dotQ8(I acc, I stored, const int8_t *x4) {
    return _mm512_dpbusd_epi32(acc, stored, bcast4(x4));
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
  static const Q16LinearKernels set{avx2q16::nk, avx2q16::quantizeRows, "avx2"};
  return set;
}

const Q16LinearKernels &avx512VnniQ16LinearKernels() {
  // The AVX2 quantiser: x is a small share of the work next to W.
  static const Q16LinearKernels set{avx512q16::nk, avx2q16::quantizeRows,
                                    "avx512vnni"};
  return set;
}

} // namespace ingot::cpu
