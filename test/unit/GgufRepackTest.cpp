//===- GgufRepackTest.cpp - GGUF blocks rewritten in ingot formats --------===//
//
// Random blocks of each repackable type (finite, moderate f16 scales) are
// rewritten with repackGgmlRow and decoded with ingot's own dequantizeRow;
// the result is compared with the GGUF decoder on the original bytes:
// bitwise for copies and Q5_0, within the f16 rounding of each group's
// scale and minimum for Q6_K and Q4_K.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufDequant.h"
#include "compiler/gguf/GgufRepack.h"
#include "ingot/Quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace ingot;
using namespace ingot::compiler::gguf;

namespace {

void putF16(uint8_t *p, float v) {
  uint16_t bits = floatToF16Bits(v);
  std::memcpy(p, &bits, 2);
}

/// A row of `blocks` random blocks whose f16 fields are moderate numbers.
std::vector<uint8_t> randomRow(const GgmlTypeTraits &t, int blocks,
                               uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(1e-3f, 2e-2f);
  std::vector<uint8_t> row(size_t(blocks * t.blockBytes));
  for (uint8_t &b : row)
    b = uint8_t(rng());
  for (int b = 0; b < blocks; ++b) {
    uint8_t *block = row.data() + b * t.blockBytes;
    if (t.type == GgmlType::Q6_K) {
      putF16(block + 208, scale(rng));
    } else {
      putF16(block, scale(rng));
      if (t.type != GgmlType::Q5_0 && t.type != GgmlType::Q8_0 &&
          t.type != GgmlType::Q4_0)
        putF16(block + 2, t.type == GgmlType::Q4_1 ? -scale(rng) * 8
                                                   : scale(rng));
    }
  }
  return row;
}

struct Decoded {
  std::vector<float> gguf, ours;
};

Decoded repackAndDecode(GgmlType type, int blocks, uint32_t seed) {
  const GgmlTypeTraits t = *ggmlTypeTraits(uint32_t(type));
  const GgmlRepack r = *ggmlRepackOf(type);
  const int64_t k = blocks * t.blockValues;
  std::vector<uint8_t> row = randomRow(t, blocks, seed);
  std::vector<uint8_t> packed(size_t(quantRowBytes(r.format, k, r.group)));
  repackGgmlRow(t, row.data(), k, packed.data());
  Decoded d{std::vector<float>(size_t(k)), std::vector<float>(size_t(k))};
  dequantizeGgmlRow(t, row.data(), k, d.gguf.data());
  dequantizeRow(r.format, r.group, packed.data(), k, d.ours.data());
  return d;
}

TEST(GgufRepack, CopiesAndQ5_0KeepEveryValueBitwise) {
  for (GgmlType type :
       {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0}) {
    SCOPED_TRACE(ggmlTypeName(uint32_t(type)));
    Decoded d = repackAndDecode(type, 5, 17);
    for (size_t i = 0; i < d.gguf.size(); ++i)
      ASSERT_EQ(0, std::memcmp(&d.gguf[i], &d.ours[i], 4))
          << i << ": " << d.gguf[i] << " vs " << d.ours[i];
  }
}

TEST(GgufRepack, KQuantsKeepTheirCodesWithF16Scales) {
  // scale · code + min with scale and min each off by at most 2^-11
  // relative: a value moves by at most 2^-11 (|scale · code| + |min|).
  // A wrong code or group would move it by a whole step (scale).
  for (GgmlType type : {GgmlType::Q6_K, GgmlType::Q4_K}) {
    SCOPED_TRACE(ggmlTypeName(uint32_t(type)));
    const GgmlTypeTraits t = *ggmlTypeTraits(uint32_t(type));
    Decoded d = repackAndDecode(type, 3, 29);
    std::vector<uint8_t> row = randomRow(t, 3, 29);
    GgmlBlockGrid g;
    double worst = 0;
    for (int b = 0; b < 3; ++b) {
      ASSERT_TRUE(decodeGgmlBlock(type, row.data() + b * t.blockBytes, &g));
      for (int i = 0; i < g.values; ++i) {
        const int s = i / g.groupValues;
        const double bound =
            std::ldexp(std::fabs(double(g.scale[s]) * g.code[i]) +
                           std::fabs(double(g.offset[s])),
                       -11) +
            1e-30;
        const size_t at = size_t(b * g.values + i);
        worst = std::max(worst, std::fabs(d.ours[at] - d.gguf[at]) / bound);
      }
    }
    EXPECT_LE(worst, 1.0 + 1e-6);
  }
}

TEST(GgufRepack, TypesWithoutAFormatAreNotRepacked) {
  for (GgmlType type : {GgmlType::Q5_1, GgmlType::Q5_K, GgmlType::F32,
                        GgmlType::F16, GgmlType::BF16})
    EXPECT_FALSE(ggmlRepackOf(type).has_value()) << int(type);
  EXPECT_EQ(ggmlRepackOf(GgmlType::Q6_K)->group, 16);
  EXPECT_EQ(ggmlRepackOf(GgmlType::Q4_K)->format, DType::Q4M);
}

} // namespace
