//===- GgufDequant.cpp - GGUF tensor data to f32 --------------------------===//
//
// One decoder per block format unpacks its integers and per-group scales
// into a grid; applying the grid is shared. The repacker (GgufRepack.cpp)
// reads the same grids, so each layout is written down once.
//
// Products and sums are kept in separate statements on purpose: clang fuses
// `a * b + c` within one expression into an FMA where the target has one,
// which would round differently from the numpy reference.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufDequant.h"
#include "ingot/DType.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace ingot::compiler::gguf {
namespace {

constexpr int kBlockValues = 32;  // Q4_0 .. Q8_0
constexpr int kSuperValues = 256; // Q4_K, Q5_K, Q6_K
constexpr int kSubBlocks = 8;     // 32-value sub-blocks of a Q4_K/Q5_K block

uint16_t readU16(const uint8_t *p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

uint32_t readU32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

float halfAt(const uint8_t *p) { return f16BitsToFloat(readU16(p)); }

float bf16ToFloat(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

/// A grid of one scale per `group` values with no offset (symmetric types).
void symmetric(GgmlBlockGrid *g, int values, int group) {
  g->values = values, g->groupValues = group, g->symmetric = true;
  std::fill(g->offset, g->offset + values / group, 0.0f);
}

// Q4_0: f16 d, 16 bytes of nibbles; low nibbles are values 0..15, high
// nibbles 16..31, both offset by 8.
void decodeQ4_0(const uint8_t *block, GgmlBlockGrid *g) {
  symmetric(g, kBlockValues, kBlockValues);
  g->scale[0] = halfAt(block);
  const uint8_t *qs = block + 2;
  for (int j = 0; j < kBlockValues / 2; ++j) {
    g->code[j] = (qs[j] & 0xF) - 8;
    g->code[j + 16] = (qs[j] >> 4) - 8;
  }
}

// Q4_1: f16 d, f16 min, nibbles as Q4_0 but unsigned: d * q + min.
void decodeQ4_1(const uint8_t *block, GgmlBlockGrid *g) {
  g->values = g->groupValues = kBlockValues, g->symmetric = false;
  g->scale[0] = halfAt(block);
  g->offset[0] = halfAt(block + 2);
  const uint8_t *qs = block + 4;
  for (int j = 0; j < kBlockValues / 2; ++j) {
    g->code[j] = qs[j] & 0xF;
    g->code[j + 16] = qs[j] >> 4;
  }
}

// Q5_0/Q5_1 share their integers: a nibble as in Q4_0 plus a fifth bit,
// bit i of the little-endian word qh for value i.
void unpackFiveBit(const uint8_t *qhBytes, const uint8_t *qs, int *q) {
  uint32_t qh = readU32(qhBytes);
  for (int j = 0; j < kBlockValues / 2; ++j) {
    q[j] = (qs[j] & 0xF) | (((qh >> j) & 1) << 4);
    q[j + 16] = (qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
  }
}

// Q5_0: f16 d, u32 qh, 16 bytes qs; 5-bit values offset by 16.
void decodeQ5_0(const uint8_t *block, GgmlBlockGrid *g) {
  symmetric(g, kBlockValues, kBlockValues);
  g->scale[0] = halfAt(block);
  unpackFiveBit(block + 2, block + 6, g->code);
  for (int i = 0; i < kBlockValues; ++i)
    g->code[i] -= 16;
}

// Q5_1: f16 d, f16 min, u32 qh, 16 bytes qs; d * q + min.
void decodeQ5_1(const uint8_t *block, GgmlBlockGrid *g) {
  g->values = g->groupValues = kBlockValues, g->symmetric = false;
  g->scale[0] = halfAt(block);
  g->offset[0] = halfAt(block + 2);
  unpackFiveBit(block + 4, block + 8, g->code);
}

// Q8_0: f16 d, 32 signed bytes.
void decodeQ8_0(const uint8_t *block, GgmlBlockGrid *g) {
  symmetric(g, kBlockValues, kBlockValues);
  g->scale[0] = halfAt(block);
  const int8_t *qs = reinterpret_cast<const int8_t *>(block + 2);
  for (int i = 0; i < kBlockValues; ++i)
    g->code[i] = qs[i];
}

// The 12 scale bytes of Q4_K/Q5_K hold eight 6-bit scales and eight 6-bit
// mins. Sub-blocks 0..3 use the low 6 bits of bytes 0..3 (scales) and 4..7
// (mins); sub-blocks 4..7 take their low 4 bits from a nibble of bytes 8..11
// and their top 2 bits from the spare top bits of bytes 0..7.
void unpackKScales(const uint8_t *scales, int *sc, int *min) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = scales[j] & 63;
    min[j] = scales[j + 4] & 63;
  }
  for (int j = 4; j < kSubBlocks; ++j) {
    sc[j] = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
    min[j] = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// Shared head of Q4_K/Q5_K: per 32-value sub-block, scale d * sc and
// offset -(dmin * min), each rounded to f32 as the reference does.
void kScales(const uint8_t *block, GgmlBlockGrid *g) {
  g->values = kSuperValues, g->groupValues = 32, g->symmetric = false;
  float d = halfAt(block);
  float dmin = halfAt(block + 2);
  int sc[kSubBlocks], min[kSubBlocks];
  unpackKScales(block + 4, sc, min);
  for (int s = 0; s < kSubBlocks; ++s) {
    g->scale[s] = d * static_cast<float>(sc[s]);
    g->offset[s] = -(dmin * static_cast<float>(min[s]));
  }
}

// Q4_K: f16 d, f16 dmin, 12 scale bytes, 128 bytes qs. Each 32-byte chunk
// of qs holds two sub-blocks: low nibbles first, then high nibbles.
void decodeQ4_K(const uint8_t *block, GgmlBlockGrid *g) {
  kScales(block, g);
  const uint8_t *qs = block + 16;
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      g->code[64 * c + l] = qs[32 * c + l] & 0xF;
      g->code[64 * c + 32 + l] = qs[32 * c + l] >> 4;
    }
}

// Q5_K: Q4_K plus 32 bytes qh (before qs); bit s of qh[l] is the fifth bit
// of value l of sub-block s.
void decodeQ5_K(const uint8_t *block, GgmlBlockGrid *g) {
  kScales(block, g);
  const uint8_t *qh = block + 16;
  const uint8_t *qs = block + 48;
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      g->code[64 * c + l] =
          (qs[32 * c + l] & 0xF) | (((qh[l] >> (2 * c)) & 1) << 4);
      g->code[64 * c + 32 + l] =
          (qs[32 * c + l] >> 4) | (((qh[l] >> (2 * c + 1)) & 1) << 4);
    }
}

// Q6_K: 128 bytes ql (low nibbles), 64 bytes qh (2-bit high parts), 16
// signed scales (one per 16 values), then f16 d last. Each half of 128
// values uses 64 bytes of ql and 32 of qh; qh[l] feeds four values 32
// apart.
void decodeQ6_K(const uint8_t *block, GgmlBlockGrid *g) {
  symmetric(g, kSuperValues, 16);
  const int8_t *scales = reinterpret_cast<const int8_t *>(block + 192);
  float d = halfAt(block + 208);
  for (int s = 0; s < kSuperValues / 16; ++s)
    g->scale[s] = d * static_cast<float>(scales[s]);
  for (int n = 0; n < 2; ++n) {
    const uint8_t *ql = block + 64 * n;
    const uint8_t *qh = block + 128 + 32 * n;
    int *half = g->code + 128 * n;
    for (int l = 0; l < 32; ++l) {
      half[l] = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      half[l + 32] = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      half[l + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      half[l + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
    }
  }
}

using GridDecoder = void (*)(const uint8_t *block, GgmlBlockGrid *g);

GridDecoder gridDecoder(GgmlType type) {
  switch (type) {
  case GgmlType::Q4_0: return decodeQ4_0;
  case GgmlType::Q4_1: return decodeQ4_1;
  case GgmlType::Q5_0: return decodeQ5_0;
  case GgmlType::Q5_1: return decodeQ5_1;
  case GgmlType::Q8_0: return decodeQ8_0;
  case GgmlType::Q4_K: return decodeQ4_K;
  case GgmlType::Q5_K: return decodeQ5_K;
  case GgmlType::Q6_K: return decodeQ6_K;
  default: return nullptr;
  }
}

/// value = scale * code (+ offset), the product rounded to f32 first.
void applyGrid(const GgmlBlockGrid &g, float *out) {
  for (int i = 0; i < g.values; ++i) {
    const int group = i / g.groupValues;
    float scaled = g.scale[group] * static_cast<float>(g.code[i]);
    out[i] = g.symmetric ? scaled : scaled + g.offset[group];
  }
}

} // namespace

void dequantizeGgmlRow(const GgmlTypeTraits &t, const void *src, int64_t k,
                       float *out) {
  const uint8_t *bytes = static_cast<const uint8_t *>(src);
  switch (t.type) {
  case GgmlType::F32:
    for (int64_t i = 0; i < k; ++i)
      out[i] = std::bit_cast<float>(readU32(bytes + 4 * i));
    return;
  case GgmlType::F16:
    for (int64_t i = 0; i < k; ++i)
      out[i] = f16BitsToFloat(readU16(bytes + 2 * i));
    return;
  case GgmlType::BF16:
    for (int64_t i = 0; i < k; ++i)
      out[i] = bf16ToFloat(readU16(bytes + 2 * i));
    return;
  default:
    break;
  }
  GridDecoder decode = gridDecoder(t.type);
  if (!decode || t.blockValues <= 0) { // traits not from ggmlTypeTraits
    std::fill(out, out + std::max<int64_t>(k, 0),
              std::numeric_limits<float>::quiet_NaN());
    return;
  }
  GgmlBlockGrid grid;
  for (int64_t b = 0; b < k / t.blockValues; ++b) {
    decode(bytes + b * t.blockBytes, &grid);
    applyGrid(grid, out + b * t.blockValues);
  }
}

bool decodeGgmlBlock(GgmlType type, const void *block, GgmlBlockGrid *grid) {
  GridDecoder decode = gridDecoder(type);
  if (!decode)
    return false;
  decode(static_cast<const uint8_t *>(block), grid);
  return true;
}

} // namespace ingot::compiler::gguf
