//===- GgufDequantTest.cpp - GGUF block formats against their definitions -===//
//
// Each test is an encoder: it draws the fields of a block (f16 scales,
// quantised integers, 6-bit sub-block scales) from a seeded generator,
// writes each one at the bit position the format gives for output index i,
// and states the value the decoder must return for i. The decoder works
// the other way, byte by byte, so the two share no code. Rows hold several
// blocks to catch stride mistakes. The expected values use the same f32
// rounding order as the decoder (scale products first), so EXPECT_FLOAT_EQ
// (4 ulps) only absorbs compiler freedom, not a different formula.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufDequant.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace ingot::compiler::gguf;

namespace {

// A row of zeroed blocks being filled field by field.
class RowBuilder {
public:
  RowBuilder(GgmlType type, int blocks, uint32_t seed)
      : traits_(*ggmlTypeTraits(static_cast<uint32_t>(type))),
        bytes_(traits_.blockBytes * blocks), rng_(seed), blocks_(blocks) {}

  int blocks() const { return blocks_; }
  /// The bit where block b starts; fields are addressed in bits from there.
  size_t blockBit(int b) const { return size_t(8 * traits_.blockBytes * b); }

  /// Writes the low `width` bits of `value` at bit `offset`, little-endian
  /// bit order (bit 0 is the low bit of byte 0).
  void put(size_t offset, int width, uint32_t value) {
    for (int bit = 0; bit < width; ++bit)
      if ((value >> bit) & 1)
        bytes_[(offset + bit) / 8] |= uint8_t(1u << ((offset + bit) % 8));
  }

  int uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }

  /// Writes a random finite non-zero half (subnormals included) and
  /// returns its value.
  float putHalf(size_t offset) {
    uint16_t bits;
    do
      bits = uint16_t(uniform(0, 0xFFFF));
    while (((bits >> 10) & 31) == 31 || (bits & 0x7FFF) == 0);
    put(offset, 16, bits);
    return halfValue(bits);
  }

  /// A half's value from its fields by ldexp, independent of the decoder's
  /// bit shuffling.
  static float halfValue(uint16_t bits) {
    int exponent = (bits >> 10) & 31, mantissa = bits & 1023;
    double magnitude;
    if (exponent == 31)
      magnitude = mantissa ? NAN : INFINITY;
    else if (exponent == 0)
      magnitude = std::ldexp(mantissa, -24);
    else
      magnitude = std::ldexp(1024 + mantissa, exponent - 25);
    return float(bits & 0x8000 ? -magnitude : magnitude);
  }

  void expectDecodesTo(const std::vector<float> &expected) const {
    int64_t k = traits_.blockValues * blocks_;
    ASSERT_EQ(int64_t(expected.size()), k);
    ASSERT_EQ(ggmlRowBytes(traits_, k), int64_t(bytes_.size()));
    std::vector<float> out(k, -12345.0f);
    dequantizeGgmlRow(traits_, bytes_.data(), k, out.data());
    for (int64_t i = 0; i < k; ++i)
      EXPECT_FLOAT_EQ(out[i], expected[i]) << traits_.name << " value " << i;
  }

private:
  GgmlTypeTraits traits_;
  std::vector<uint8_t> bytes_;
  std::mt19937 rng_;
  int blocks_;
};

// Value i of a 32-value block: a nibble of byte (i % 16), low for i < 16.
size_t nibbleBit(size_t qsBit, int i) {
  return qsBit + 8 * (i % 16) + 4 * (i / 16);
}

TEST(GgufDequantTest, Q4_0) {
  RowBuilder row(GgmlType::Q4_0, 3, 40);
  std::vector<float> expected;
  for (int b = 0; b < row.blocks(); ++b) {
    size_t base = row.blockBit(b);
    float d = row.putHalf(base);
    for (int i = 0; i < 32; ++i) {
      int q = row.uniform(0, 15);
      row.put(nibbleBit(base + 16, i), 4, q);
      expected.push_back(d * float(q - 8));
    }
  }
  row.expectDecodesTo(expected);
}

TEST(GgufDequantTest, Q4_1) {
  RowBuilder row(GgmlType::Q4_1, 3, 41);
  std::vector<float> expected;
  for (int b = 0; b < row.blocks(); ++b) {
    size_t base = row.blockBit(b);
    float d = row.putHalf(base), m = row.putHalf(base + 16);
    for (int i = 0; i < 32; ++i) {
      int q = row.uniform(0, 15);
      row.put(nibbleBit(base + 32, i), 4, q);
      float scaled = d * float(q);
      expected.push_back(scaled + m);
    }
  }
  row.expectDecodesTo(expected);
}

// Q5_0/Q5_1: bit 4 of value i is bit i of the 32-bit word at qhBit.
void putFiveBit(RowBuilder &row, size_t qhBit, size_t qsBit, int i, int q) {
  row.put(nibbleBit(qsBit, i), 4, q & 15);
  row.put(qhBit + i, 1, q >> 4);
}

TEST(GgufDequantTest, Q5_0) {
  RowBuilder row(GgmlType::Q5_0, 3, 50);
  std::vector<float> expected;
  for (int b = 0; b < row.blocks(); ++b) {
    size_t base = row.blockBit(b);
    float d = row.putHalf(base);
    for (int i = 0; i < 32; ++i) {
      int q = row.uniform(0, 31);
      putFiveBit(row, base + 16, base + 48, i, q);
      expected.push_back(d * float(q - 16));
    }
  }
  row.expectDecodesTo(expected);
}

TEST(GgufDequantTest, Q5_1) {
  RowBuilder row(GgmlType::Q5_1, 3, 51);
  std::vector<float> expected;
  for (int b = 0; b < row.blocks(); ++b) {
    size_t base = row.blockBit(b);
    float d = row.putHalf(base), m = row.putHalf(base + 16);
    for (int i = 0; i < 32; ++i) {
      int q = row.uniform(0, 31);
      putFiveBit(row, base + 32, base + 64, i, q);
      float scaled = d * float(q);
      expected.push_back(scaled + m);
    }
  }
  row.expectDecodesTo(expected);
}

TEST(GgufDequantTest, Q8_0) {
  RowBuilder row(GgmlType::Q8_0, 3, 80);
  std::vector<float> expected;
  for (int b = 0; b < row.blocks(); ++b) {
    size_t base = row.blockBit(b);
    float d = row.putHalf(base);
    for (int i = 0; i < 32; ++i) {
      int q = row.uniform(-128, 127);
      row.put(base + 16 + 8 * i, 8, uint8_t(int8_t(q)));
      expected.push_back(d * float(q));
    }
  }
  row.expectDecodesTo(expected);
}

// The 12 scale bytes of Q4_K/Q5_K: sub-blocks 0..3 keep their 6-bit scale
// and min whole in bytes s and s+4; 4..7 split theirs into a nibble of byte
// s+4 and the top two bits of bytes s-4 (scale) and s (min).
struct KScales {
  int scale[8], min[8];
};

KScales putKScales(RowBuilder &row, size_t scalesBit) {
  KScales k;
  for (int s = 0; s < 8; ++s) {
    k.scale[s] = row.uniform(0, 63);
    k.min[s] = row.uniform(0, 63);
    if (s < 4) {
      row.put(scalesBit + 8 * s, 6, k.scale[s]);
      row.put(scalesBit + 8 * (s + 4), 6, k.min[s]);
    } else {
      row.put(scalesBit + 8 * (s + 4), 4, k.scale[s] & 15);
      row.put(scalesBit + 8 * (s - 4) + 6, 2, k.scale[s] >> 4);
      row.put(scalesBit + 8 * (s + 4) + 4, 4, k.min[s] & 15);
      row.put(scalesBit + 8 * s + 6, 2, k.min[s] >> 4);
    }
  }
  return k;
}

// Value i of a Q4_K/Q5_K block: byte i % 32 of the 32-byte chunk i / 64,
// the high nibble for the second sub-block of the chunk.
size_t kNibbleBit(size_t qsBit, int i) {
  return qsBit + 8 * (32 * (i / 64) + i % 32) + 4 * ((i / 32) % 2);
}

// Builds a Q4_K (fiveBits false) or Q5_K row; Q5_K has qh before qs, with
// bit (i / 32) of byte (i % 32) as the fifth bit of value i.
void checkKQuant(GgmlType type, bool fiveBits, uint32_t seed) {
  RowBuilder row(type, 2, seed);
  std::vector<float> expected;
  for (int b = 0; b < row.blocks(); ++b) {
    size_t base = row.blockBit(b);
    float d = row.putHalf(base), dmin = row.putHalf(base + 16);
    KScales k = putKScales(row, base + 32);
    size_t qhBit = base + 8 * 16, qsBit = base + 8 * (fiveBits ? 48 : 16);
    for (int i = 0; i < 256; ++i) {
      int q = row.uniform(0, fiveBits ? 31 : 15);
      row.put(kNibbleBit(qsBit, i), 4, q & 15);
      if (fiveBits)
        row.put(qhBit + 8 * (i % 32) + i / 32, 1, q >> 4);
      int s = i / 32;
      float scale = d * float(k.scale[s]), offset = dmin * float(k.min[s]);
      float scaled = scale * float(q);
      expected.push_back(scaled - offset);
    }
  }
  row.expectDecodesTo(expected);
}

TEST(GgufDequantTest, Q4_K) { checkKQuant(GgmlType::Q4_K, false, 412); }
TEST(GgufDequantTest, Q5_K) { checkKQuant(GgmlType::Q5_K, true, 513); }

// Q6_K value i, in half n = i / 128 at r = i % 128, group j = r / 32, lane
// l = r % 32: low nibble of ql byte 64n + 32(j % 2) + l (high nibble when
// j >= 2), top two bits at bit 2j of qh byte 32n + l, scale byte i / 16.
TEST(GgufDequantTest, Q6_K) {
  RowBuilder row(GgmlType::Q6_K, 2, 614);
  std::vector<float> expected;
  for (int b = 0; b < row.blocks(); ++b) {
    size_t base = row.blockBit(b);
    float d = row.putHalf(base + 8 * 208);
    int scales[16];
    for (int g = 0; g < 16; ++g) {
      scales[g] = row.uniform(-128, 127);
      row.put(base + 8 * (192 + g), 8, uint8_t(int8_t(scales[g])));
    }
    for (int i = 0; i < 256; ++i) {
      int n = i / 128, j = (i % 128) / 32, l = i % 32;
      int q = row.uniform(0, 63);
      row.put(base + 8 * (64 * n + 32 * (j % 2) + l) + 4 * (j / 2), 4, q & 15);
      row.put(base + 8 * (128 + 32 * n + l) + 2 * j, 2, q >> 4);
      float scale = d * float(scales[i / 16]);
      expected.push_back(scale * float(q - 32));
    }
  }
  row.expectDecodesTo(expected);
}

TEST(GgufDequantTest, F32AndBF16AreBitCopies) {
  std::mt19937 rng(32);
  std::vector<uint32_t> words(64);
  for (uint32_t &w : words)
    w = rng() & 0xFF7FFFFFu; // exponent never all ones: no NaN
  std::vector<float> out(words.size());
  dequantizeGgmlRow(*ggmlTypeTraits(0), words.data(), words.size(), out.data());
  for (size_t i = 0; i < words.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), words[i]);

  std::vector<uint16_t> halves(words.size());
  for (size_t i = 0; i < words.size(); ++i)
    halves[i] = uint16_t(words[i] >> 16);
  dequantizeGgmlRow(*ggmlTypeTraits(30), halves.data(), halves.size(),
                    out.data());
  for (size_t i = 0; i < halves.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), uint32_t(halves[i]) << 16);
}

TEST(GgufDequantTest, F16EveryBitPattern) {
  std::vector<uint16_t> halves(1 << 16);
  for (size_t i = 0; i < halves.size(); ++i)
    halves[i] = uint16_t(i);
  std::vector<float> out(halves.size());
  dequantizeGgmlRow(*ggmlTypeTraits(1), halves.data(), halves.size(),
                    out.data());
  for (size_t i = 0; i < halves.size(); ++i) {
    float want = RowBuilder::halfValue(halves[i]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(out[i])) << "half 0x" << std::hex << i;
    else // bitwise, so -0 and +0 differ
      EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want))
          << "half 0x" << std::hex << i;
  }
  EXPECT_EQ(out[0x3C00], 1.0f);
  EXPECT_EQ(out[0x7BFF], 65504.0f);
  EXPECT_EQ(out[0x0001], std::ldexp(1.0f, -24));
  EXPECT_EQ(out[0xFC00], -INFINITY);
}

TEST(GgufDequantTest, UnknownTypeFillsNaN) {
  GgmlTypeTraits bogus{GgmlType(23), "IQ4_XS", 256, 136};
  std::vector<uint8_t> bytes(136, 0x55);
  std::vector<float> out(256, 0.0f);
  dequantizeGgmlRow(bogus, bytes.data(), 256, out.data());
  for (float v : out)
    EXPECT_TRUE(std::isnan(v));
}

TEST(GgmlTypeTest, TraitsOfEveryKnownType) {
  struct Expected {
    uint32_t id;
    const char *name;
    int64_t values, bytes;
  } table[] = {
      {0, "F32", 1, 4},       {1, "F16", 1, 2},      {30, "BF16", 1, 2},
      {2, "Q4_0", 32, 18},    {3, "Q4_1", 32, 20},   {6, "Q5_0", 32, 22},
      {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},   {12, "Q4_K", 256, 144},
      {13, "Q5_K", 256, 176}, {14, "Q6_K", 256, 210}};
  for (const Expected &e : table) {
    std::optional<GgmlTypeTraits> t = ggmlTypeTraits(e.id);
    ASSERT_TRUE(t.has_value()) << e.name;
    EXPECT_EQ(uint32_t(t->type), e.id);
    EXPECT_STREQ(t->name, e.name);
    EXPECT_EQ(t->blockValues, e.values) << e.name;
    EXPECT_EQ(t->blockBytes, e.bytes) << e.name;
    EXPECT_EQ(ggmlTypeName(e.id), e.name);
    EXPECT_NE(supportedGgmlTypes().find(e.name), std::string::npos);
  }
  EXPECT_EQ(supportedGgmlTypes().rfind("F32, F16, BF16, Q4_0", 0), 0u);
}

TEST(GgmlTypeTest, UnsupportedIds) {
  // Q4_2, Q4_3 (removed), Q8_1, Q2_K, Q3_K, Q8_K, IQ2_XXS, I8, I64, Q4_0_4_4
  // (removed), out of range.
  for (uint32_t id : {4u, 5u, 9u, 10u, 11u, 15u, 16u, 24u, 27u, 31u, 999u})
    EXPECT_FALSE(ggmlTypeTraits(id).has_value()) << id;
  EXPECT_EQ(ggmlTypeName(23), "type 23");
}

TEST(GgmlTypeTest, RowBytes) {
  GgmlTypeTraits q4k = *ggmlTypeTraits(12), f32 = *ggmlTypeTraits(0);
  EXPECT_EQ(ggmlRowBytes(q4k, 0), 0);
  EXPECT_EQ(ggmlRowBytes(q4k, 4096), 16 * 144);
  EXPECT_EQ(ggmlRowBytes(*ggmlTypeTraits(8), 64), 68);
  EXPECT_EQ(ggmlRowBytes(f32, 7), 28);
  EXPECT_EQ(ggmlRowBytes(q4k, 100), -1);
  EXPECT_EQ(ggmlRowBytes(q4k, 256 + 32), -1);
  EXPECT_EQ(ggmlRowBytes(*ggmlTypeTraits(2), 33), -1);
  EXPECT_EQ(ggmlRowBytes(q4k, -256), -1);
  // Whole blocks, but the byte count does not fit in int64 (only types with
  // more bytes than values per block can overflow).
  const int64_t maxK = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(ggmlRowBytes(*ggmlTypeTraits(8), maxK / 32 * 32), -1);
  EXPECT_EQ(ggmlRowBytes(q4k, maxK / 256 * 256), maxK / 256 * 144);
  EXPECT_EQ(ggmlRowBytes(f32, maxK), -1);
  EXPECT_EQ(ggmlRowBytes(f32, maxK / 4), maxK / 4 * 4);
}

} // namespace
