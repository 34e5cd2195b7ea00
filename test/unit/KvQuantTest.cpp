//===- KvQuantTest.cpp - 8-bit KV-cache rows and attention over them -------===//
//
// The row codecs against their definitions, the cache's byte accounting,
// and paged_attention over int8 and fp8 caches against the same steps over
// an f32 cache. Tolerances: an int8 row's error is at most s/2 per value
// (s = max|x| / 127), under 0.4% of the row's largest value; e4m3 keeps 3
// mantissa bits, so a value's error is at most 2^-4 of itself (plus a
// subnormal floor of s·2^-10). Attention mixes those errors through the
// scores and the weighted V sum; with |q|, |k|, |v| < 1 and head dim ≤ 64
// the outputs here stay within 1e-2 (int8) and 6e-2 (fp8) relative to the
// f32 cache's (measured: at most 4.8e-3 and 2.6e-2).
//
//===----------------------------------------------------------------------===//
#include "LlmTestUtil.h"

#include "cpu/KvQuant.h"

#include <cmath>
#include <cstring>

using namespace ingot;
using namespace ingot::test;

namespace {

std::vector<float> randomRow(Rng &rng, int64_t d, float scale) {
  Tensor t = rng.uniform({d});
  std::vector<float> row(ptr<float>(t), ptr<float>(t) + d);
  for (float &x : row)
    x *= scale;
  return row;
}

/// One step's inputs for `tokens` tokens of one sequence at positions
/// [first, first + tokens) in blocks 0, 1, 2, ...
struct StepInputs {
  Tensor q, k, v, pos, slots, table, ends;
};

StepInputs makeStep(Rng &rng, const AttnShape &a, int64_t first,
                    int64_t tokens, int64_t blockSize, int64_t blocks) {
  StepInputs s;
  s.q = rng.uniform({tokens, a.heads * a.headDim});
  s.k = rng.uniform({tokens, a.kvHeads * a.headDim});
  s.v = rng.uniform({tokens, a.kvHeads * a.headDim});
  std::vector<int64_t> pos, slots, table;
  for (int64_t i = 0; i < tokens; ++i) {
    pos.push_back(first + i);
    slots.push_back(first + i); // block b holds positions b*bs..
  }
  for (int64_t b = 0; b < blocks; ++b)
    table.push_back(b);
  s.pos = i64({tokens}, pos);
  s.slots = i64({tokens}, slots);
  s.table = i64({1, blocks}, table);
  s.ends = i64({1}, {tokens});
  (void)blockSize;
  return s;
}

double relativeError(const Tensor &a, const Tensor &b) {
  double num = 0, den = 0;
  const float *x = ptr<float>(a), *y = ptr<float>(b);
  for (size_t i = 0; i < a.data.size() / sizeof(float); ++i) {
    num += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    den += double(y[i]) * y[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

} // namespace

TEST(KvQuant, Int8RowsAreWithinHalfAStep) {
  Rng rng(11);
  for (float scale : {1e-3f, 1.0f, 300.0f}) {
    std::vector<float> row = randomRow(rng, 64, scale), back(64);
    std::vector<uint8_t> codes(64);
    float s = cpu::quantizeKvRow(DType::I8, row.data(), 64, codes.data());
    float amax = 0;
    for (float x : row)
      amax = std::max(amax, std::fabs(x));
    EXPECT_FLOAT_EQ(s, amax / 127.0f);
    cpu::dequantizeKvRows(DType::I8, codes.data(), &s, 0, 1, 64, 64,
                          back.data());
    for (int i = 0; i < 64; ++i)
      EXPECT_LE(std::fabs(back[i] - row[i]), 0.5f * s * 1.0001f) << i;
  }
}

TEST(KvQuant, Fp8RowsKeepThreeMantissaBits) {
  Rng rng(12);
  std::vector<float> row = randomRow(rng, 40, 5.0f), back(40);
  std::vector<uint8_t> codes(40);
  float s = cpu::quantizeKvRow(DType::F8E4M3, row.data(), 40, codes.data());
  cpu::dequantizeKvRows(DType::F8E4M3, codes.data(), &s, 0, 1, 40, 40,
                        back.data());
  for (int i = 0; i < 40; ++i)
    EXPECT_LE(std::fabs(back[i] - row[i]),
              std::fabs(row[i]) / 16 + s * std::ldexp(1.0f, -10))
        << i;
}

TEST(KvQuant, ZeroRowsDecodeToZero) {
  std::vector<float> row(16, 0.0f), back(16, 1.0f);
  std::vector<uint8_t> codes(16, 0xff);
  for (DType t : {DType::I8, DType::F8E4M3}) {
    float s = cpu::quantizeKvRow(t, row.data(), 16, codes.data());
    EXPECT_EQ(s, 0.0f);
    cpu::dequantizeKvRows(t, codes.data(), &s, 0, 1, 16, 16, back.data());
    for (float x : back)
      EXPECT_EQ(x, 0.0f);
  }
}

TEST(KvQuant, CacheBytesCountValuesAndScales) {
  LlmConfig c = cacheConfig(3, 16, 2, 64);
  const uint64_t f32 = KvCacheStorage::bytesFor(c, 10);
  c.kvDtype = DType::I8;
  const uint64_t i8 = KvCacheStorage::bytesFor(c, 10);
  // 10 blocks × 16 tokens × 2 heads = 320 rows per array, 6 arrays.
  EXPECT_EQ(f32, 6u * 320 * 64 * 4);
  EXPECT_EQ(i8, 6u * (320 * 64 + 320 * 4));
  EXPECT_EQ(kvRowBytes(DType::I8, 64), 68u);
  c.kvDtype = DType::F16;
  KvCacheStorage storage;
  Status s = storage.allocate(c, 4);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("float16"), std::string::npos);
  DType parsed = DType::F32;
  EXPECT_TRUE(parseKvCacheDtype("fp8", DType::F32, &parsed));
  EXPECT_EQ(parsed, DType::F8E4M3);
  EXPECT_FALSE(parseKvCacheDtype("int4", DType::F32, &parsed));
}

TEST(KvQuant, AttentionOverEightBitCachesTracksTheF32Cache) {
  const AttnShape a{6, 2, 40, 0, true};
  const int64_t bs = 4, blocks = 20;
  for (auto [type, tol] : {std::pair{DType::I8, 1e-2}, {DType::F8E4M3, 6e-2}}) {
    for (KvLayout layout :
         {KvLayout::BlockTokenHeadDim, KvLayout::BlockHeadTokenDim}) {
      SCOPED_TRACE(std::string(dtypeName(type)) + " " + kvLayoutName(layout));
      LlmConfig c = cacheConfig(2, bs, a.kvHeads, a.headDim);
      c.kvLayout = kvLayoutName(layout);
      KvCacheStorage ref, quant;
      ASSERT_TRUE(ref.allocate(c, blocks).isOk());
      c.kvDtype = type;
      ASSERT_TRUE(quant.allocate(c, blocks).isOk());
      EXPECT_EQ(quant.view().dtype, type);
      Rng rng(40 + int(type));
      int64_t len = 0;
      for (int64_t tokens : {23, 1, 1, 9, 1}) { // prefill, decodes, chunk
        StepInputs s = makeStep(rng, a, len, tokens, bs, blocks);
        len += tokens;
        std::vector<const Tensor *> in = {&s.q, &s.k, &s.v, &s.pos,
                                          &s.slots, &s.table, &s.ends};
        Tensor want, got;
        ASSERT_TRUE(runAttention(in, attnAttrs(a, 1), &ref.view(), &want).isOk());
        ASSERT_TRUE(runAttention(in, attnAttrs(a, 1), &quant.view(), &got).isOk());
        const double err = relativeError(got, want);
        EXPECT_LT(err, tol) << "step of " << tokens << " tokens";
        EXPECT_GT(err, 0.0); // the cache really is 8-bit
      }
    }
  }
}

TEST(KvQuant, EveryIsaDequantisesToTheSameBits) {
  Rng rng(13);
  for (DType type : {DType::I8, DType::F8E4M3})
    for (int64_t d : {64, 20}) {
      const int64_t rows = 5, stride = 3 * d; // rows apart, as in a layout
      std::vector<uint8_t> codes(size_t(rows * stride));
      std::vector<float> scales(size_t(rows * stride / d));
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<float> x = randomRow(rng, d, 2.0f);
        scales[size_t(r * stride / d)] =
            cpu::quantizeKvRow(type, x.data(), d, codes.data() + r * stride);
      }
      std::vector<float> want(size_t(rows * d)), got(size_t(rows * d));
      cpu::kvDequantFor(cpu::GemmIsa::Generic)(type, codes.data(),
                                               scales.data(), 0, rows, stride,
                                               d, want.data());
      for (cpu::GemmIsa isa : {cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512}) {
        if (!cpu::gemmIsaSupported(isa))
          continue;
        cpu::kvDequantFor(isa)(type, codes.data(), scales.data(), 0, rows,
                               stride, d, got.data());
        EXPECT_EQ(std::memcmp(want.data(), got.data(),
                              want.size() * sizeof(float)),
                  0)
            << dtypeName(type) << " d=" << d << " isa " << int(isa);
      }
    }
}
