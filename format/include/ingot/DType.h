//===- DType.h - Element types shared by compiler and runtime ---*- C++ -*-===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ingot {

/// Element types an artifact can hold. The numeric values are part of the
/// artifact format: never renumber, only append.
enum class DType : uint8_t {
  F32 = 1,
  F16 = 2,
  BF16 = 3,
  F64 = 4,
  I64 = 5,
  I32 = 6,
  I8 = 7,
  U8 = 8,
  Bool = 9, // one byte per element, 0 or 1
  // Quantised block formats (ingot/Quant.h): weights of linears only; a
  // tensor's size comes from quantTensorBytes, not from an element size.
  Q8 = 10,
  Q4 = 11,
  Q4M = 12,
  F8E4M3 = 13,
  // Integers ONNX models carry; kernels compute on them widened (the
  // importer casts them to i32/i64 around arithmetic).
  I16 = 14,
  U16 = 15,
  U32 = 16,
  U64 = 17,
  // ONNX's narrow float and integer element types, one element per byte
  // (unpacked: the bits of ml_dtypes' numpy types, the value in the low
  // bits). Only cast computes on them (ingot/MiniFloat.h); other kernels
  // move them as bytes.
  F8E4M3FN = 18,
  F8E4M3FNUZ = 19,
  F8E5M2 = 20,
  F8E5M2FNUZ = 21,
  F4E2M1 = 22,
  I4 = 23,
  U4 = 24,
  I2 = 25,
  U2 = 26,
};

inline size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
  case DType::F4E2M1:
  case DType::I4:
  case DType::U4:
  case DType::I2:
  case DType::U2:
    return 1;
  case DType::Q8:
  case DType::Q4:
  case DType::Q4M:
  case DType::F8E4M3:
    return 0; // no per-element size: see quantTensorBytes
  }
  return 0;
}

/// numpy-style names ("float32", "int64", "bool"), used in messages and .npy.
inline const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "float32";
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  case DType::F64:
    return "float64";
  case DType::I64:
    return "int64";
  case DType::I32:
    return "int32";
  case DType::I8:
    return "int8";
  case DType::U8:
    return "uint8";
  case DType::I16:
    return "int16";
  case DType::U16:
    return "uint16";
  case DType::U32:
    return "uint32";
  case DType::U64:
    return "uint64";
  case DType::Bool:
    return "bool";
  case DType::Q8:
    return "q8";
  case DType::Q4:
    return "q4";
  case DType::Q4M:
    return "q4m";
  case DType::F8E4M3:
    return "f8e4m3";
  case DType::F8E4M3FN:
    return "float8_e4m3fn";
  case DType::F8E4M3FNUZ:
    return "float8_e4m3fnuz";
  case DType::F8E5M2:
    return "float8_e5m2";
  case DType::F8E5M2FNUZ:
    return "float8_e5m2fnuz";
  case DType::F4E2M1:
    return "float4_e2m1fn";
  case DType::I4:
    return "int4";
  case DType::U4:
    return "uint4";
  case DType::I2:
    return "int2";
  case DType::U2:
    return "uint2";
  }
  return "unknown";
}

inline std::optional<DType> dtypeFromName(std::string_view name) {
  for (DType t :
       {DType::F32,        DType::F16,      DType::BF16,       DType::F64,
        DType::I64,        DType::I32,      DType::I8,         DType::U8,
        DType::Bool,       DType::I16,      DType::U16,        DType::U32,
        DType::U64,        DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2,
        DType::F8E5M2FNUZ, DType::F4E2M1,   DType::I4,         DType::U4,
        DType::I2,         DType::U2})
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}

/// The largest DType value; every value from 1 to it is a DType.
inline constexpr uint32_t kLastDType = uint32_t(DType::U2);
inline bool isValidDType(uint32_t raw) { return raw >= 1 && raw <= kLastDType; }

/// The narrow element types that have no numpy dtype of their own (numpy
/// writes ml_dtypes' arrays as raw bytes, "|V1" / "<V2" in .npy).
inline bool isRawNpyDType(DType t) {
  return t == DType::BF16 || (uint8_t(t) >= uint8_t(DType::F8E4M3FN) &&
                              uint8_t(t) <= uint8_t(DType::U2));
}

/// IEEE binary16 bits to f32 (exact) and back (round to nearest even), for
/// code outside the kernels that reads or writes f16 fields (block scales).
float f16BitsToFloat(uint16_t bits);
uint16_t floatToF16Bits(float value);

} // namespace ingot
