//===- Q16TestUtil.h - Weights and formats for the "q16" tests --*- C++ -*-===//
//
// Random quantised weights in row-major blocks, their "q16" packing and
// their dequantised values, for LinearQ16Test and Q16LayoutTest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelTestUtil.h"
#include "ingot/DType.h"
#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::test::q16 {

/// A "q16" weight format: blocks of 32, or (group 0) one block per row,
/// which only q8 has (per output channel).
struct Format {
  DType t;
  int64_t group;
  int64_t groupFor(int64_t k) const { return group ? group : k; }
  std::string name() const {
    return std::string(dtypeName(t)) + (group ? " g32" : " per channel");
  }
};
constexpr Format kFormats[] = {
    {DType::Q8, 32}, {DType::Q4, 32}, {DType::Q4M, 32}, {DType::Q8, 0}};

/// Row-major blocks of a random [n, k] weight, a few rows all zero or with
/// one large value, so that scales span a wide range.
inline std::vector<uint8_t> rowMajorBlocks(DType t, int64_t n, int64_t k,
                                           uint32_t seed, int64_t group = 32) {
  std::vector<float> w = normalValues(size_t(n * k), seed, 0.05f);
  for (int64_t c = 0; c < k; ++c)
    w[size_t(1 * k + c)] = 0.0f;
  w[size_t(2 * k + 5)] = 3.0f;
  std::vector<uint8_t> q(size_t(quantTensorBytes(t, n, k, group)));
  QuantOptions o;
  o.format = t;
  o.group = group;
  EXPECT_TRUE(quantizeTensor(o, DType::F32, w.data(), n, k, q.data()).isOk());
  return q;
}

inline std::vector<uint8_t> packed(DType t,
                                   const std::vector<uint8_t> &rowMajor,
                                   int64_t n, int64_t k, int64_t group = 32) {
  std::vector<uint8_t> out(rowMajor.size());
  EXPECT_TRUE(packQ16(t, rowMajor.data(), n, k, group, out.data()).isOk());
  return out;
}

/// The weight's values as stored (dequantised rows), [n, k] f32.
inline std::vector<float> dequantised(DType t, const std::vector<uint8_t> &rm,
                                      int64_t n, int64_t k,
                                      int64_t group = 32) {
  std::vector<float> w(size_t(n * k));
  const int64_t rowBytes = quantRowBytes(t, k, group);
  for (int64_t j = 0; j < n; ++j)
    dequantizeRow(t, group, rm.data() + j * rowBytes, k, w.data() + j * k);
  return w;
}

} // namespace ingot::test::q16
