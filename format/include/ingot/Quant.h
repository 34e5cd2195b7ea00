//===- Quant.h - Quantised weight formats of the artifact -------*- C++ -*-===//
//
// A quantised [N, K] linear weight is stored row by row; each row is split
// along K into groups of `group` values (the last group of a row is shorter
// when K is not a multiple), and each group is one block:
//
//   q8   (DType::Q8)   f16 d, then g int8 q            value = d * q
//   q4   (DType::Q4)   f16 d, then ceil(g/2) bytes     value = d * (q - 8)
//   q4m  (DType::Q4M)  f16 d, f16 m, ceil(g/2) bytes   value = d * q + m
//   f8   (DType::F8E4M3) f16 d, then g e4m3 bytes      value = d * e4m3(q)
//
// int4 values are packed per run of 32 as llama.cpp's Q4_0/Q4_1 blocks
// pack them: byte i of a run holds value i in its low nibble and value
// i + 16 in its high nibble (a short last run of t values: i + ceil(t/2)).
// With group 32 a q8 row is therefore a row of GGUF Q8_0 blocks, q4 of
// Q4_0 blocks and q4m of Q4_1 blocks, byte for byte, so the GGUF importer
// can keep their bits. One scale dtype (f16) for all formats keeps the
// kernels to one block decoder per format; per-channel scales (int8 and fp8
// with group = K) lose nothing that matters: the relative step of an f16 is
// 2^-11, far below an int8 or e4m3 step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"
#include "ingot/Status.h"

#include <cstdint>
#include <string>

namespace ingot {

/// Values per int4 packing run (llama.cpp's block size).
constexpr int64_t kQ4Run = 32;

/// Whether `t` is one of the quantised block formats.
inline bool isQuantDType(DType t) {
  return t == DType::Q8 || t == DType::Q4 || t == DType::Q4M ||
         t == DType::F8E4M3;
}

/// Bytes of a block's scale (and, for q4m, minimum) ahead of its values.
constexpr int64_t quantHeaderBytes(DType t) { return t == DType::Q4M ? 4 : 2; }

/// Bytes of one block holding `g` values of format `t` (inline: the
/// kernels step through blocks with it).
constexpr int64_t quantBlockBytes(DType t, int64_t g) {
  switch (t) {
  case DType::Q8:
  case DType::F8E4M3:
    return quantHeaderBytes(t) + g;
  case DType::Q4:
  case DType::Q4M: // runs of 32 values in 16 bytes, a short run rounded up
    return quantHeaderBytes(t) + g / kQ4Run * (kQ4Run / 2) +
           (g % kQ4Run + 1) / 2;
  default:
    return 0;
  }
}
/// Bytes of one row of `k` values in groups of `group`.
int64_t quantRowBytes(DType t, int64_t k, int64_t group);
/// Bytes of an [n, k] tensor, or -1 when the size overflows or the
/// arguments are invalid (group < 1, negative dims).
int64_t quantTensorBytes(DType t, int64_t n, int64_t k, int64_t group);
/// Bits per weight, scales included, for messages and `inspect`.
double quantBitsPerWeight(DType t, int64_t k, int64_t group);

/// How a quantiser rounds (the format fixes the rest).
struct QuantOptions {
  DType format = DType::Q8;
  int64_t group = 32; // values per block along K; K itself = per channel
};

/// Quantises one row of `k` f32 values into `quantRowBytes` bytes at dst.
void quantizeRow(const QuantOptions &o, const float *x, int64_t k, void *dst);
/// The inverse: the values the stored row stands for.
void dequantizeRow(DType t, int64_t group, const void *src, int64_t k,
                   float *out);

/// Quantises a row-major [n, k] tensor of f32/f16/bf16 `src` (elemType)
/// into dst (quantTensorBytes bytes).
Status quantizeTensor(const QuantOptions &o, DType elemType, const void *src,
                      int64_t n, int64_t k, void *dst);

/// e4m3 ("fn": no infinities, 0x7f/0xff NaN) from and to f32, rounding to
/// nearest even and saturating at ±448.
uint8_t floatToE4m3(float f);
float e4m3ToFloat(uint8_t v);

} // namespace ingot
