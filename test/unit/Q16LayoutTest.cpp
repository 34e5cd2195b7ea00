//===- Q16LayoutTest.cpp - The "q16" weight layout and who reads it ------===//
//
// packQ16 is a permutation of the row-major blocks (unpackQ16Row inverts
// it row by row) for every format, groups of 32 and q8 per channel; what
// the layout cannot hold is refused; the linear refuses a weight whose
// stored layout is not the one its w_layout reads; and the gather kernel
// reads "q16" rows as the dequantised rows, bitwise.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"
#include "LlmTestUtil.h"
#include "Q16TestUtil.h"
#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace ingot;
using namespace ingot::test::q16;

namespace {

TEST(Q16Layout, PackIsAPermutationThatUnpacksRowByRow) {
  for (const Format &f : kFormats) {
    SCOPED_TRACE(f.name());
    const DType t = f.t;
    const int64_t n = 48, k = 96, g = f.groupFor(k);
    const int64_t rowBytes = quantRowBytes(t, k, g);
    const std::vector<uint8_t> rm = rowMajorBlocks(t, n, k, 3, g);
    const std::vector<uint8_t> p = packed(t, rm, n, k, g);
    ASSERT_NE(rm, p); // it does reorder
    std::vector<uint8_t> row(static_cast<size_t>(rowBytes));
    for (int64_t r = 0; r < n; ++r) {
      unpackQ16Row(t, p.data(), k, g, r, row.data());
      ASSERT_EQ(0, std::memcmp(row.data(), rm.data() + r * rowBytes,
                               size_t(rowBytes)))
          << "row " << r;
    }
  }
}

TEST(Q16Layout, RefusesWhatItCannotHold) {
  EXPECT_NE(q16Unsupported(DType::F8E4M3, 16, 32, 32), "");
  EXPECT_NE(q16Unsupported(DType::Q4, 20, 32, 32), "");
  EXPECT_NE(q16Unsupported(DType::Q4, 16, 48, 32), "");
  EXPECT_NE(q16Unsupported(DType::Q8, 16, 128, 64), "");
  EXPECT_NE(q16Unsupported(DType::Q4, 16, 64, 64), "");
  EXPECT_NE(q16Unsupported(DType::Q8, 16, 48, 48), "");
  EXPECT_EQ(q16Unsupported(DType::Q8, 16, 64, 64), ""); // per channel
  EXPECT_EQ(q16Unsupported(DType::Q4M, 16, 64, 32), "");
  EXPECT_FALSE(checkWeightLayout("q16", DType::F32, {16, 32}, 0).isOk());
  EXPECT_FALSE(checkWeightLayout("nk16", DType::Q4, {16, 32}, 32).isOk());
  EXPECT_FALSE(checkWeightLayout("nk8", DType::F32, {16, 32}, 0).isOk());
  EXPECT_TRUE(checkWeightLayout("q16", DType::Q8, {32, 64}, 32).isOk());
}

TEST(LinearQ16, RefusesAWeightStoredInAnotherLayout) {
  const int64_t n = 16, k = 32;
  test::Tensor wq;
  wq.dtype = DType::Q4;
  wq.shape = {n, k};
  wq.data = rowMajorBlocks(DType::Q4, n, k, 37);
  const test::Tensor x = test::f32({1, k}, test::normalValues(size_t(k), 41));
  test::Call c("linear", {&x, &wq}, {test::strAttr("w_layout", "q16")});
  c.groupSizes = {0, 32};
  std::vector<test::Tensor> outs;
  Status s = test::runKernel(c, &outs); // stored row-major
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("stored as \"row-major\""), std::string::npos)
      << s.message();
  c.layouts = {"", "q16"};
  c.attrs = {test::strAttr("w_layout", "nk")}; // q16 bytes read as rows
  EXPECT_FALSE(test::runKernel(c, &outs).isOk());
}

TEST(Q16Gather, RowsAreTheDequantisedRowsBitwise) {
  for (const Format &f : kFormats) {
    SCOPED_TRACE(f.name());
    const DType t = f.t;
    const int64_t rows = 48, k = 64, group = f.groupFor(k);
    const std::vector<uint8_t> rm = rowMajorBlocks(t, rows, k, 43, group);
    const std::vector<float> all = dequantised(t, rm, rows, k, group);
    test::Tensor table;
    table.dtype = t, table.shape = {rows, k},
    table.data = packed(t, rm, rows, k, group);
    const std::vector<int64_t> ids = {3, 0, 47, -1, 17, 31};
    test::Tensor idx = test::make(DType::I64, {2, 3}, ids);
    test::Call g("gather", {&table, &idx}, {});
    g.groupSizes = {group, 0};
    g.layouts = {"q16", ""};
    const test::Tensor out = test::runOk(g);
    const float *y = test::ptr<float>(out);
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t row = ids[i] < 0 ? ids[i] + rows : ids[i];
      ASSERT_EQ(0, std::memcmp(y + i * k, all.data() + row * k, size_t(k) * 4))
          << "index " << ids[i];
    }
  }
}

} // namespace
