//===- KvBf16Test.cpp - The bfloat16 KV cache
//------------------------------===//
//
// A bfloat16 cache stores each K/V value rounded to nearest even and
// widens it exactly before the same f32 arithmetic as an f32 cache. So
// attention over it must give bitwise the outputs of an f32 cache fed the
// same K/V values rounded to bfloat16 beforehand: the tests compare bits,
// not a tolerance. The rounding itself is checked on hand-picked values
// (ties, the largest finite, infinities, NaN, subnormals).
//
//===----------------------------------------------------------------------===//
#include "LlmTestUtil.h"

#include "cpu/KvQuant.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace ingot;
using namespace ingot::test;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Every value of `t` (f32) rounded to bfloat16 and widened back.
void roundToBf16(Tensor &t) {
  float *p = ptr<float>(t);
  for (size_t i = 0; i < t.data.size() / sizeof(float); ++i)
    p[i] = cpu::bf16ToFloat(cpu::floatToBf16(p[i]));
}

} // namespace

TEST(KvBf16, RowsRoundToNearestEven) {
  const float inf = std::numeric_limits<float>::infinity();
  // {value, its bfloat16 bits}: 1 + 2^-8 is halfway between 1 and the next
  // bfloat16 (1 + 2^-7) and goes to the even one, 1 + 3·2^-8 to 1 + 2^-6.
  const std::pair<float, uint16_t> cases[] = {
      {1.0f, 0x3f80},
      {1.0f + 0x1p-8f, 0x3f80},
      {1.0f + 3 * 0x1p-8f, 0x3f82},
      {-2.5f, 0xc020},
      {fromBits(0x7f7fffff), 0x7f80}, // the largest float rounds to inf
      {inf, 0x7f80},
      {-inf, 0xff80},
      {fromBits(0x00010000), 0x0001}, // a subnormal stays one
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
  };
  std::vector<float> row;
  for (auto [x, bits] : cases)
    row.push_back(x);
  row.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<uint16_t> stored(row.size());
  cpu::storeBf16Row(row.data(), int64_t(row.size()), stored.data());
  for (size_t i = 0; i + 1 < row.size(); ++i)
    EXPECT_EQ(stored[i], cases[i].second) << "value " << row[i];
  EXPECT_TRUE(std::isnan(cpu::bf16ToFloat(stored.back())));

  std::vector<float> back(row.size());
  cpu::dequantizeKvRows(
      DType::BF16, reinterpret_cast<const uint8_t *>(stored.data()), nullptr, 0,
      1, int64_t(row.size()), int64_t(row.size()), back.data());
  for (size_t i = 0; i < row.size(); ++i)
    EXPECT_EQ(bitsOf(back[i]), uint32_t(stored[i]) << 16) << i;
}

TEST(KvBf16, CacheHoldsTwoBytesPerValueAndNoScales) {
  LlmConfig c = cacheConfig(3, 16, 2, 64);
  const uint64_t f32 = KvCacheStorage::bytesFor(c, 10);
  c.kvDtype = DType::BF16;
  EXPECT_EQ(KvCacheStorage::bytesFor(c, 10), f32 / 2);
  EXPECT_EQ(kvRowBytes(DType::BF16, 64), 128u);
  EXPECT_EQ(KvCacheStorage::bytesPerBlock(c), 2u * 3 * 16 * 2 * 128);
  KvCacheStorage storage;
  ASSERT_TRUE(storage.allocate(c, 4).isOk());
  const KvCacheView &v = storage.view();
  EXPECT_EQ(v.dtype, DType::BF16);
  EXPECT_EQ(v.keys16.size(), 3u);
  EXPECT_TRUE(v.keys.empty() && v.keys8.empty() && v.keyScales.empty());
  for (const char *name : {"bf16", "bfloat16"}) {
    DType parsed = DType::F32;
    EXPECT_TRUE(parseKvCacheDtype(name, DType::F32, &parsed)) << name;
    EXPECT_EQ(parsed, DType::BF16) << name;
  }
}

TEST(KvBf16, AttentionIsTheF32CacheOfRoundedValues) {
  const AttnShape a{6, 2, 40, 0, true};
  const int64_t bs = 4, blocks = 80; // 320 slots, 285 used
  for (KvLayout layout :
       {KvLayout::BlockTokenHeadDim, KvLayout::BlockHeadTokenDim}) {
    SCOPED_TRACE(kvLayoutName(layout));
    LlmConfig c = cacheConfig(2, bs, a.kvHeads, a.headDim);
    c.kvLayout = kvLayoutName(layout);
    KvCacheStorage ref, bf16;
    ASSERT_TRUE(ref.allocate(c, blocks).isOk());
    c.kvDtype = DType::BF16;
    ASSERT_TRUE(bf16.allocate(c, blocks).isOk());
    Rng rng(71);
    int64_t len = 0;
    // Prefill, decodes and a chunk; past 256 positions the window has two
    // chunks, so the partial-softmax merge runs too.
    for (int64_t tokens : {23, 1, 1, 9, 250, 1}) {
      SCOPED_TRACE("step of " + std::to_string(tokens) + " tokens");
      Tensor q = rng.uniform({tokens, a.heads * a.headDim});
      Tensor k = rng.uniform({tokens, a.kvHeads * a.headDim});
      Tensor v = rng.uniform({tokens, a.kvHeads * a.headDim});
      std::vector<int64_t> pos, table;
      for (int64_t i = 0; i < tokens; ++i)
        pos.push_back(len + i);
      for (int64_t b = 0; b < blocks; ++b)
        table.push_back(b);
      len += tokens;
      Tensor p = i64({tokens}, pos), slots = i64({tokens}, pos);
      Tensor bt = i64({1, blocks}, table), ends = i64({1}, {tokens});
      Tensor got, want, kr = k, vr = v;
      ASSERT_TRUE(runAttention({&q, &k, &v, &p, &slots, &bt, &ends},
                               attnAttrs(a, 1), &bf16.view(), &got)
                      .isOk());
      roundToBf16(kr);
      roundToBf16(vr);
      ASSERT_TRUE(runAttention({&q, &kr, &vr, &p, &slots, &bt, &ends},
                               attnAttrs(a, 1), &ref.view(), &want)
                      .isOk());
      ASSERT_EQ(got.data.size(), want.data.size());
      EXPECT_EQ(std::memcmp(got.data.data(), want.data.data(), got.data.size()),
                0);
      EXPECT_NE(std::memcmp(k.data.data(), kr.data.data(), k.data.size()),
                0); // the rounding did change values
    }
  }
}

TEST(KvBf16, EveryIsaWidensToTheSameBits) {
  Rng rng(72);
  for (int64_t d : {64, 20}) { // 20: vector tails on both ISAs
    const int64_t rows = 5, stride = 3 * d;
    Tensor values = rng.uniform({rows * stride});
    std::vector<uint16_t> stored(size_t(rows * stride));
    cpu::storeBf16Row(ptr<float>(values), rows * stride, stored.data());
    const auto *codes = reinterpret_cast<const uint8_t *>(stored.data());
    std::vector<float> want(size_t(rows * d)), got(size_t(rows * d));
    cpu::kvDequantFor(cpu::GemmIsa::Generic)(DType::BF16, codes, nullptr, d,
                                             rows - 1, stride, d, want.data());
    for (cpu::GemmIsa isa : {cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512}) {
      if (!cpu::gemmIsaSupported(isa))
        continue;
      std::fill(got.begin(), got.end(), -1.0f);
      cpu::kvDequantFor(isa)(DType::BF16, codes, nullptr, d, rows - 1, stride,
                             d, got.data());
      EXPECT_EQ(std::memcmp(want.data(), got.data(),
                            size_t((rows - 1) * d) * sizeof(float)),
                0)
          << "d=" << d << " isa " << int(isa);
    }
  }
}
