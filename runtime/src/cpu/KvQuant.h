//===- KvQuant.h - bfloat16 and 8-bit rows of the KV cache ------*- C++ -*-===//
//
// One row is one token's headDim values of one KV head, stored as 8-bit
// codes with one f32 scale (KvCache.h): int8 q = round(x / s) with
// s = max|x| / 127, or fp8 e4m3(x / s) with s = max|x| / 448 (e4m3's
// largest finite value). An all-zero row gets s = 0 and decodes to zeros.
// A bfloat16 row is its values rounded to nearest even, with no scale.
// Attention dequantises a block's run of rows into scratch and reads them
// exactly as it reads an f32 cache, so every summation order is unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"
#include "ingot/DType.h"
#include "ingot/Quant.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace ingot::cpu {

/// e4m3 code -> float, all 256 codes (NaN codes decode to NaN).
inline const std::array<float, 256> &e4m3Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i)
      t[size_t(i)] = e4m3ToFloat(uint8_t(i));
    return t;
  }();
  return table;
}

/// Writes the codes of `x[0..d)` to `out` and returns the row's scale.
inline float quantizeKvRow(DType type, const float *x, int64_t d,
                           uint8_t *out) {
  float amax = 0;
  for (int64_t i = 0; i < d; ++i)
    amax = std::max(amax, std::fabs(x[i]));
  const float maxCode = type == DType::I8 ? 127.0f : 448.0f;
  const float s = amax / maxCode;
  const float inv = s > 0 ? 1.0f / s : 0.0f;
  for (int64_t i = 0; i < d; ++i) {
    const float y = x[i] * inv;
    out[i] = type == DType::I8
                 ? uint8_t(int8_t(std::clamp(std::nearbyint(y), -127.0f, 127.0f)))
                 : floatToE4m3(std::clamp(y, -448.0f, 448.0f));
  }
  return s;
}

/// Writes `x[0..d)` rounded to bfloat16 (nearest even) to `out`.
inline void storeBf16Row(const float *x, int64_t d, uint16_t *out) {
  for (int64_t i = 0; i < d; ++i)
    out[i] = floatToBf16(x[i]);
}

/// Decodes `count` rows, `stride` elements apart starting at element
/// `offset` of `codes`, into `out` (count × d, contiguous); the scale of
/// the row at element offset o is scales[o / d]. A bfloat16 cache passes
/// its uint16_t values as `codes` and no scales.
inline void dequantizeKvRows(DType type, const uint8_t *codes,
                             const float *scales, int64_t offset,
                             int64_t count, int64_t stride, int64_t d,
                             float *out) {
  const std::array<float, 256> &fp8 = e4m3Table();
  if (type == DType::BF16) {
    const auto *values = reinterpret_cast<const uint16_t *>(codes);
    for (int64_t r = 0; r < count; ++r)
      for (int64_t i = 0; i < d; ++i)
        out[r * d + i] = bf16ToFloat(values[offset + r * stride + i]);
    return;
  }
  for (int64_t r = 0; r < count; ++r) {
    const int64_t at = offset + r * stride;
    const uint8_t *row = codes + at;
    const float s = scales[at / d];
    float *o = out + r * d;
    if (type == DType::I8)
      for (int64_t i = 0; i < d; ++i)
        o[i] = float(int8_t(row[i])) * s;
    else
      for (int64_t i = 0; i < d; ++i)
        o[i] = fp8[row[i]] * s;
  }
}

/// dequantizeKvRows for one ISA (KvDequant.cpp): the same bits on each.
using KvDequantFn = void (*)(DType type, const uint8_t *codes,
                             const float *scales, int64_t offset,
                             int64_t count, int64_t stride, int64_t d,
                             float *out);
KvDequantFn kvDequantFor(GemmIsa isa); // isa must be supported
KvDequantFn bestKvDequant();

} // namespace ingot::cpu
