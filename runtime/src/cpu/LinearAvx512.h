//===- LinearAvx512.h - Shared AVX-512F linear kernel parts -*- C++ -*-===//
//
// Private to LinearAvx512.cpp ("nk" and widening) and LinearAvx512Tiled.cpp
// ("kn", including the register-tiled prefill kernel).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/Linear.h"

#include <immintrin.h>

#define INGOT_AVX512 __attribute__((target("avx512f")))

namespace ingot::cpu {

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

/// The "kn" kernels (LinearAvx512Tiled.cpp): few rows, and many (prefill).
void avx512KnAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1);
void avx512KnManyAny(const LinearDecodeArgs &a, int64_t n0, int64_t n1);
AlignedFloats avx512PackKn(const LinearDecodeArgs &a);

} // namespace ingot::cpu
