//===- LinearQuantUtil.h - Block decoding shared by the ISA kernels -*- C++ -*-=//
//
// Plain C++ pieces of the quantised linear kernels that every ISA shares
// (the portable kernel and the x86 body of LinearQuantX86.inc): the f32
// factor each stored value contributes, before the group's scale.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelUtil.h"
#include "ingot/Quant.h"

#include <cstdint>
#include <cstring>

namespace ingot::cpu {

/// What the group's f16 scale is multiplied by: e4m3 values are widened
/// as f16 numbers 2^8 times smaller (see e4m3HalfBits).
constexpr float groupScaleFactor(DType t) {
  return t == DType::F8E4M3 ? 256.0f : 1.0f;
}

/// An e4m3 byte as the bits of the f16 whose value is the e4m3 value
/// times 2^-8: sign to bit 15, exponent and mantissa to bits 13..7 (the
/// f16 bias 15 is the e4m3 bias 7 plus 8; subnormals map to subnormals).
inline uint16_t e4m3HalfBits(uint8_t b) {
  return uint16_t(((b & 0x80) << 8) | ((b & 0x7f) << 7));
}

/// The int4 factors of `t` values of run `run` of a group (t <= 32, the
/// run's value i in the low nibble of byte i, value i + ceil(t/2) in the
/// high one): q - 8 for q4, q for q4m.
template <DType T>
inline void widenShortRun(const uint8_t *payload, int64_t run, int64_t t,
                          float *out) {
  const uint8_t *b = payload + 16 * run;
  const int64_t h = (t + 1) / 2;
  const int bias = T == DType::Q4 ? 8 : 0;
  for (int64_t i = 0; i < h; ++i) {
    out[i] = float((b[i] & 0x0f) - bias);
    if (i + h < t)
      out[i + h] = float((b[i] >> 4) - bias);
  }
}

/// Value v of a q8 or f8e4m3 group as its f32 factor.
template <DType T> inline float widenValue(const uint8_t *payload, int64_t v) {
  if constexpr (T == DType::Q8)
    return float(int8_t(payload[v]));
  else
    return halfToFloat(e4m3HalfBits(payload[v]));
}

/// All gs factors of a group, in index order.
template <DType T>
inline void widenGroup(const uint8_t *payload, int64_t gs, float *out) {
  if constexpr (T == DType::Q8 || T == DType::F8E4M3) {
    for (int64_t v = 0; v < gs; ++v)
      out[v] = widenValue<T>(payload, v);
  } else {
    for (int64_t r = 0; r * 32 < gs; ++r)
      widenShortRun<T>(payload, r, gs - r * 32 < 32 ? gs - r * 32 : 32,
                       out + r * 32);
  }
}

} // namespace ingot::cpu
