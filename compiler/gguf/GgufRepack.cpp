//===- GgufRepack.cpp - GGUF blocks into ingot's block formats ------------===//
#include "compiler/gguf/GgufRepack.h"
#include "compiler/gguf/GgufDequant.h"
#include "ingot/Quant.h"

#include <cstring>

namespace ingot::compiler::gguf {
namespace {

void storeF16(uint8_t *p, uint16_t bits) { std::memcpy(p, &bits, 2); }

/// One q8 block: f16 scale, then the codes as int8.
uint8_t *writeQ8(uint8_t *out, float scale, const int *codes, int n) {
  storeF16(out, floatToF16Bits(scale));
  for (int i = 0; i < n; ++i)
    out[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(codes[i]));
  return out + quantBlockBytes(DType::Q8, n);
}

/// One q4m block of 32: f16 scale, f16 minimum, byte i = code i | code
/// i + 16 << 4 (the Q4_1 packing).
uint8_t *writeQ4m(uint8_t *out, float scale, float min, const int *codes) {
  storeF16(out, floatToF16Bits(scale));
  storeF16(out + 2, floatToF16Bits(min));
  for (int i = 0; i < kQ4Run / 2; ++i)
    out[4 + i] = static_cast<uint8_t>(codes[i] | (codes[i + 16] << 4));
  return out + quantBlockBytes(DType::Q4M, kQ4Run);
}

} // namespace

std::optional<GgmlRepack> ggmlRepackOf(GgmlType type) {
  switch (type) {
  case GgmlType::Q8_0: return GgmlRepack{DType::Q8, 32, RepackKind::Copy};
  case GgmlType::Q4_0: return GgmlRepack{DType::Q4, 32, RepackKind::Copy};
  case GgmlType::Q4_1: return GgmlRepack{DType::Q4M, 32, RepackKind::Copy};
  // d * (q - 16) with q - 16 in [-16, 15] is a q8 code under the same d.
  case GgmlType::Q5_0:
    return GgmlRepack{DType::Q8, 32, RepackKind::SameValues};
  // One int8 scale per 16 values: q8 at group 16, scale f16(d * sc).
  case GgmlType::Q6_K:
    return GgmlRepack{DType::Q8, 16, RepackKind::RoundedScales};
  // A scale and a minimum per 32 values: q4m g32.
  case GgmlType::Q4_K:
    return GgmlRepack{DType::Q4M, 32, RepackKind::RoundedScales};
  default: return std::nullopt;
  }
}

void repackGgmlRow(const GgmlTypeTraits &t, const void *src, int64_t k,
                   void *dst) {
  const std::optional<GgmlRepack> r = ggmlRepackOf(t.type);
  auto *in = static_cast<const uint8_t *>(src);
  auto *out = static_cast<uint8_t *>(dst);
  if (!r)
    return;
  if (r->kind == RepackKind::Copy) {
    std::memcpy(out, in, size_t(k / t.blockValues * t.blockBytes));
    return;
  }
  GgmlBlockGrid g;
  for (int64_t b = 0; b < k / t.blockValues; ++b) {
    decodeGgmlBlock(t.type, in + b * t.blockBytes, &g);
    for (int s = 0; s < g.values / g.groupValues; ++s) {
      const int *codes = g.code + s * g.groupValues;
      if (r->format == DType::Q8)
        out = writeQ8(out, g.scale[s], codes, g.groupValues);
      else
        out = writeQ4m(out, g.scale[s], g.offset[s], codes);
    }
  }
}

} // namespace ingot::compiler::gguf
