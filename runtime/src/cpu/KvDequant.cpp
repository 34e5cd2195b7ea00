//===- KvDequant.cpp - bfloat16 and 8-bit KV rows to f32, vectorised ------===//
//
// A bfloat16 value widens exactly (its bits become an f32's upper half).
// The hot half of an 8-bit cache: every attention read dequantises a
// block's run of rows (KvQuant.h) into scratch. int8 codes are widened and
// converted 8 or 16 at a time. An e4m3 code becomes the f16 with the same
// sign, exponent and mantissa bits (sign << 15 | rest << 7), which the
// hardware converts to f32 exactly; that is the e4m3 value / 256 (the
// exponent biases are 15 and 7), so it is multiplied by 256·s. No gather,
// and no f32 subnormal (which would cost a microcode assist) on the way.
// Each value is its code's exact value times the row scale, one rounding,
// as in the scalar loop (scaling by a power of two commutes with rounding),
// so every ISA gives the same bits for every code the quantiser writes
// (it never writes the NaN codes 0x7f/0xff).
//
//===----------------------------------------------------------------------===//
#include "cpu/KvQuant.h"

#include <immintrin.h>

#define INGOT_AVX2 __attribute__((target("avx2,fma,f16c")))
#define INGOT_AVX512 __attribute__((target("avx512f")))

namespace ingot::cpu {
namespace {

void dequantGeneric(DType type, const uint8_t *codes, const float *scales,
                    int64_t offset, int64_t count, int64_t stride, int64_t d,
                    float *out) {
  dequantizeKvRows(type, codes, scales, offset, count, stride, d, out);
}

INGOT_AVX2 void widenBf16Avx2(const uint16_t *values, int64_t offset,
                              int64_t count, int64_t stride, int64_t d,
                              float *out) {
  for (int64_t r = 0; r < count; ++r) {
    const uint16_t *row = values + offset + r * stride;
    float *o = out + r * d;
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) {
      const __m128i h =
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(row + i));
      _mm256_storeu_ps(o + i, _mm256_castsi256_ps(_mm256_slli_epi32(
                                  _mm256_cvtepu16_epi32(h), 16)));
    }
    for (; i < d; ++i)
      o[i] = bf16ToFloat(row[i]);
  }
}

INGOT_AVX2 void dequantAvx2(DType type, const uint8_t *codes,
                            const float *scales, int64_t offset, int64_t count,
                            int64_t stride, int64_t d, float *out) {
  if (type == DType::BF16)
    return widenBf16Avx2(reinterpret_cast<const uint16_t *>(codes), offset,
                         count, stride, d, out);
  const float *table = e4m3Table().data(); // for the tails
  for (int64_t r = 0; r < count; ++r) {
    const int64_t at = offset + r * stride;
    const uint8_t *row = codes + at;
    const float s = scales[at / d];
    const __m256 vs = _mm256_set1_ps(type == DType::I8 ? s : 256.0f * s);
    float *o = out + r * d;
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) {
      const __m128i c = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(row + i));
      __m256 x;
      if (type == DType::I8) {
        x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(c));
      } else {
        const __m128i w = _mm_cvtepu8_epi16(c);
        const __m128i h = _mm_or_si128(
            _mm_slli_epi16(_mm_and_si128(w, _mm_set1_epi16(0x80)), 8),
            _mm_slli_epi16(_mm_and_si128(w, _mm_set1_epi16(0x7f)), 7));
        x = _mm256_cvtph_ps(h);
      }
      _mm256_storeu_ps(o + i, _mm256_mul_ps(x, vs));
    }
    for (; i < d; ++i)
      o[i] = (type == DType::I8 ? float(int8_t(row[i])) : table[row[i]]) * s;
  }
}

INGOT_AVX512 void widenBf16Avx512(const uint16_t *values, int64_t offset,
                                  int64_t count, int64_t stride, int64_t d,
                                  float *out) {
  for (int64_t r = 0; r < count; ++r) {
    const uint16_t *row = values + offset + r * stride;
    float *o = out + r * d;
    int64_t i = 0;
    for (; i + 16 <= d; i += 16) {
      const __m256i h =
          _mm256_loadu_si256(reinterpret_cast<const __m256i *>(row + i));
      _mm512_storeu_ps(o + i, _mm512_castsi512_ps(_mm512_slli_epi32(
                                  _mm512_cvtepu16_epi32(h), 16)));
    }
    for (; i < d; ++i)
      o[i] = bf16ToFloat(row[i]);
  }
}

INGOT_AVX512 void dequantAvx512(DType type, const uint8_t *codes,
                                const float *scales, int64_t offset,
                                int64_t count, int64_t stride, int64_t d,
                                float *out) {
  if (type == DType::BF16)
    return widenBf16Avx512(reinterpret_cast<const uint16_t *>(codes), offset,
                           count, stride, d, out);
  const float *table = e4m3Table().data(); // for the tails
  for (int64_t r = 0; r < count; ++r) {
    const int64_t at = offset + r * stride;
    const uint8_t *row = codes + at;
    const float s = scales[at / d];
    const __m512 vs = _mm512_set1_ps(type == DType::I8 ? s : 256.0f * s);
    float *o = out + r * d;
    int64_t i = 0;
    for (; i + 16 <= d; i += 16) {
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(row + i));
      __m512 x;
      if (type == DType::I8) {
        x = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(c));
      } else {
        const __m512i w = _mm512_cvtepu8_epi32(c);
        const __m512i h = _mm512_or_si512(
            _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x80)), 8),
            _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x7f)), 7));
        x = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h));
      }
      _mm512_storeu_ps(o + i, _mm512_mul_ps(x, vs));
    }
    for (; i < d; ++i)
      o[i] = (type == DType::I8 ? float(int8_t(row[i])) : table[row[i]]) * s;
  }
}

} // namespace

KvDequantFn kvDequantFor(GemmIsa isa) {
  // Every AVX2 machine so far has F16C, but the AVX2 ISA check does not
  // promise it.
  const bool f16c = __builtin_cpu_supports("f16c");
  return isa == GemmIsa::Avx512         ? dequantAvx512
         : isa == GemmIsa::Avx2 && f16c ? dequantAvx2
                                        : dequantGeneric;
}

KvDequantFn bestKvDequant() {
  static const KvDequantFn best = kvDequantFor(bestGemmIsa());
  return best;
}

} // namespace ingot::cpu
