//===- GgufDequant.cpp - GGUF tensor data to f32 --------------------------===//
//
// One function per block format. Each unpacks its quantised integers first
// and applies the scales after, so the bit twiddling and the float
// arithmetic can be read (and checked against the format) separately.
//
// Products and sums are kept in separate statements on purpose: clang fuses
// `a * b + c` within one expression into an FMA where the target has one,
// which would round differently from the numpy reference.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufDequant.h"

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

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) { // infinity or NaN, payload kept
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) { // normal: rebias 15 -> 127
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // subnormal half is a normal float: shift the leading 1 out
    uint32_t shift = 0;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113 - shift) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

float halfAt(const uint8_t *p) { return halfToFloat(readU16(p)); }

float bf16ToFloat(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

// Q4_0: f16 d, 16 bytes of nibbles; low nibbles are values 0..15, high
// nibbles 16..31, both offset by 8.
void dequantQ4_0(const uint8_t *block, float *out) {
  float d = halfAt(block);
  const uint8_t *qs = block + 2;
  for (int j = 0; j < kBlockValues / 2; ++j) {
    out[j] = d * static_cast<float>((qs[j] & 0xF) - 8);
    out[j + 16] = d * static_cast<float>((qs[j] >> 4) - 8);
  }
}

// Q4_1: f16 d, f16 min, nibbles as Q4_0 but unsigned: d * q + min.
void dequantQ4_1(const uint8_t *block, float *out) {
  float d = halfAt(block);
  float min = halfAt(block + 2);
  const uint8_t *qs = block + 4;
  for (int j = 0; j < kBlockValues / 2; ++j) {
    float low = d * static_cast<float>(qs[j] & 0xF);
    float high = d * static_cast<float>(qs[j] >> 4);
    out[j] = low + min;
    out[j + 16] = high + min;
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
void dequantQ5_0(const uint8_t *block, float *out) {
  float d = halfAt(block);
  int q[kBlockValues];
  unpackFiveBit(block + 2, block + 6, q);
  for (int i = 0; i < kBlockValues; ++i)
    out[i] = d * static_cast<float>(q[i] - 16);
}

// Q5_1: f16 d, f16 min, u32 qh, 16 bytes qs; d * q + min.
void dequantQ5_1(const uint8_t *block, float *out) {
  float d = halfAt(block);
  float min = halfAt(block + 2);
  int q[kBlockValues];
  unpackFiveBit(block + 4, block + 8, q);
  for (int i = 0; i < kBlockValues; ++i) {
    float scaled = d * static_cast<float>(q[i]);
    out[i] = scaled + min;
  }
}

// Q8_0: f16 d, 32 signed bytes.
void dequantQ8_0(const uint8_t *block, float *out) {
  float d = halfAt(block);
  const int8_t *qs = reinterpret_cast<const int8_t *>(block + 2);
  for (int i = 0; i < kBlockValues; ++i)
    out[i] = static_cast<float>(qs[i]) * d;
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

// Shared tail of Q4_K/Q5_K: value = (d * sc) * q - (dmin * min), per
// 32-value sub-block.
void applyKScales(const uint8_t *block, const int *q, float *out) {
  float d = halfAt(block);
  float dmin = halfAt(block + 2);
  int sc[kSubBlocks], min[kSubBlocks];
  unpackKScales(block + 4, sc, min);
  for (int s = 0; s < kSubBlocks; ++s) {
    float scale = d * static_cast<float>(sc[s]);
    float offset = dmin * static_cast<float>(min[s]);
    for (int l = 0; l < 32; ++l) {
      float scaled = scale * static_cast<float>(q[32 * s + l]);
      out[32 * s + l] = scaled - offset;
    }
  }
}

// Q4_K: f16 d, f16 dmin, 12 scale bytes, 128 bytes qs. Each 32-byte chunk
// of qs holds two sub-blocks: low nibbles first, then high nibbles.
void dequantQ4_K(const uint8_t *block, float *out) {
  const uint8_t *qs = block + 16;
  int q[kSuperValues];
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = qs[32 * c + l] & 0xF;
      q[64 * c + 32 + l] = qs[32 * c + l] >> 4;
    }
  applyKScales(block, q, out);
}

// Q5_K: Q4_K plus 32 bytes qh (before qs); bit s of qh[l] is the fifth bit
// of value l of sub-block s.
void dequantQ5_K(const uint8_t *block, float *out) {
  const uint8_t *qh = block + 16;
  const uint8_t *qs = block + 48;
  int q[kSuperValues];
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = (qs[32 * c + l] & 0xF) | (((qh[l] >> (2 * c)) & 1) << 4);
      q[64 * c + 32 + l] =
          (qs[32 * c + l] >> 4) | (((qh[l] >> (2 * c + 1)) & 1) << 4);
    }
  applyKScales(block, q, out);
}

// Q6_K: 128 bytes ql (low nibbles), 64 bytes qh (2-bit high parts), 16
// signed scales (one per 16 values), then f16 d last. Each half of 128
// values uses 64 bytes of ql and 32 of qh; qh[l] feeds four values 32
// apart.
void dequantQ6_K(const uint8_t *block, float *out) {
  const int8_t *scales = reinterpret_cast<const int8_t *>(block + 192);
  float d = halfAt(block + 208);
  int q[kSuperValues];
  for (int n = 0; n < 2; ++n) {
    const uint8_t *ql = block + 64 * n;
    const uint8_t *qh = block + 128 + 32 * n;
    int *half = q + 128 * n;
    for (int l = 0; l < 32; ++l) {
      half[l] = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      half[l + 32] = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      half[l + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      half[l + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
    }
  }
  for (int g = 0; g < kSuperValues / 16; ++g) {
    float scale = d * static_cast<float>(scales[g]);
    for (int l = 0; l < 16; ++l)
      out[16 * g + l] = scale * static_cast<float>(q[16 * g + l]);
  }
}

using BlockDecoder = void (*)(const uint8_t *block, float *out);

BlockDecoder blockDecoder(GgmlType type) {
  switch (type) {
  case GgmlType::Q4_0:
    return dequantQ4_0;
  case GgmlType::Q4_1:
    return dequantQ4_1;
  case GgmlType::Q5_0:
    return dequantQ5_0;
  case GgmlType::Q5_1:
    return dequantQ5_1;
  case GgmlType::Q8_0:
    return dequantQ8_0;
  case GgmlType::Q4_K:
    return dequantQ4_K;
  case GgmlType::Q5_K:
    return dequantQ5_K;
  case GgmlType::Q6_K:
    return dequantQ6_K;
  default:
    return nullptr;
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
      out[i] = halfToFloat(readU16(bytes + 2 * i));
    return;
  case GgmlType::BF16:
    for (int64_t i = 0; i < k; ++i)
      out[i] = bf16ToFloat(readU16(bytes + 2 * i));
    return;
  default:
    break;
  }
  BlockDecoder decode = blockDecoder(t.type);
  if (!decode || t.blockValues <= 0) { // traits not from ggmlTypeTraits
    std::fill(out, out + std::max<int64_t>(k, 0),
              std::numeric_limits<float>::quiet_NaN());
    return;
  }
  for (int64_t b = 0; b < k / t.blockValues; ++b)
    decode(bytes + b * t.blockBytes, out + b * t.blockValues);
}

} // namespace ingot::compiler::gguf
