//===- GgufDequant.h - GGUF tensor data to f32 ------------------*- C++ -*-===//
//
// Private to the GGUF importer. Expands one row of a GGUF tensor, stored in
// any type ggmlTypeTraits knows, into f32. The block layouts are ggml's,
// little-endian whatever the host; the arithmetic follows the order of the
// gguf Python package's numpy reference (scale products rounded to f32
// before they meet the quantised value) so results agree bit for bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/gguf/GgmlType.h"

#include <cstdint>

namespace ingot::compiler::gguf {

/// Dequantises one row of `k` values of type `t` (k a multiple of the block
/// size) from `src` (ggmlRowBytes bytes) into out[k] f32. A type this file
/// does not decode fills `out` with NaN.
void dequantizeGgmlRow(const GgmlTypeTraits &t, const void *src, int64_t k,
                       float *out);

/// One block of a quantised type as integer codes on an affine grid per
/// group of values: value[i] = scale[g] * code[i] + offset[g] with
/// g = i / groupValues (the product rounded to f32 first). Symmetric types
/// have offset +0 and signed codes (Q4_0: q - 8); Q4_1/Q5_1 have the block
/// minimum, Q4_K/Q5_K -(dmin * min) per 32-value sub-block; Q6_K has one
/// scale per 16 values.
struct GgmlBlockGrid {
  int values = 0;
  int groupValues = 0;
  bool symmetric = false; // no offset term at all (keeps the sign of zero)
  int code[256];
  float scale[16];
  float offset[16];
};

/// Decodes one block of a quantised type; false for F32/F16/BF16 and types
/// this file does not decode.
bool decodeGgmlBlock(GgmlType type, const void *block, GgmlBlockGrid *grid);

} // namespace ingot::compiler::gguf
