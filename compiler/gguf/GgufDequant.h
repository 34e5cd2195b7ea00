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

} // namespace ingot::compiler::gguf
