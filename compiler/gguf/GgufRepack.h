//===- GgufRepack.h - GGUF blocks into ingot's block formats ----*- C++ -*-===//
//
// Private to the GGUF importer. Most GGUF quantised types are integer codes
// with a scale (and a minimum) per group, like ingot's q8/q4/q4m formats
// (ingot/Quant.h). Where the codes fit, a row is rewritten block by block,
// keeping the codes and converting only the scales, instead of decoding to
// f32 and quantising again (which would round every value a second time).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/gguf/GgmlType.h"
#include "ingot/DType.h"

#include <cstdint>
#include <optional>

namespace ingot::compiler::gguf {

enum class RepackKind {
  Copy,        // the bytes are already the ingot format (Q8_0, Q4_0, Q4_1)
  SameValues,  // rewritten, every value unchanged (Q5_0 -> q8)
  RoundedScales, // codes kept, scales (and minimums) rounded to f16
};

struct GgmlRepack {
  DType format;
  int64_t group;
  RepackKind kind;
};

/// How rows of `type` become an ingot format; nullopt when no format holds
/// its codes (Q5_1 and Q5_K: 5-bit codes with a minimum; F32/F16/BF16).
std::optional<GgmlRepack> ggmlRepackOf(GgmlType type);

/// Rewrites one row of `k` values of `t` (ggmlRowBytes bytes at src) in
/// ggmlRepackOf(t)'s format (quantRowBytes bytes at dst).
void repackGgmlRow(const GgmlTypeTraits &t, const void *src, int64_t k,
                   void *dst);

} // namespace ingot::compiler::gguf
