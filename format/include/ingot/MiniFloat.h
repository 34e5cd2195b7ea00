//===- MiniFloat.h - ONNX's float8 and float4 element types ----*- C++ -*-===//
//
// Conversions between double and the narrow float types ONNX names
// (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1),
// bit for bit as ml_dtypes, which onnx's reference Cast uses: round to
// nearest even; with `saturate` a finite or infinite value past the largest
// finite one becomes it, without it the format's infinity (e5m2) or NaN.
// float4 has neither, so it always saturates, and a NaN becomes -0 (0x08),
// or +0 when its sign bit is set (what ml_dtypes writes). The FNUZ types have
// no -0 (it becomes +0) and one NaN, 0x80.
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_MINIFLOAT_H
#define INGOT_MINIFLOAT_H

#include "ingot/DType.h"

#include <cstdint>

namespace ingot {

/// Whether `t` is one of the narrow float types above.
bool isMiniFloat(DType t);
/// The value `bits` of type `t` holds (exact in double).
double miniFloatToDouble(DType t, uint8_t bits);
/// `v` rounded to type `t` (round to nearest even, once).
uint8_t doubleToMiniFloat(DType t, double v, bool saturate);

/// ONNX's narrow integers (int4, uint4, int2, uint2), stored one per byte
/// in the low bits as ml_dtypes does.
bool isNarrowInt(DType t);
/// The value of a stored narrow integer (sign-extended for int4/int2).
int64_t narrowIntValue(DType t, uint8_t bits);
/// An integer narrowed like a C cast: its low bits.
uint8_t narrowIntWrap(DType t, int64_t v);
/// A float narrowed as ml_dtypes does: truncated toward zero, and 0 when
/// that is out of range, infinite or NaN.
uint8_t narrowIntFromDouble(DType t, double v);

} // namespace ingot

#endif // INGOT_MINIFLOAT_H
