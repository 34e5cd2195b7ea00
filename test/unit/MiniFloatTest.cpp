//===- MiniFloatTest.cpp - float8/float4 and int4/int2 conversions --------===//
//
// The codec's structure: every code decodes to a value that encodes back
// to it, the largest finite values and specials are the formats' own, and
// rounding is to nearest even. Bit-exactness against ml_dtypes on random
// values is test/e2e/test_ops_narrow_types.py.
//
//===----------------------------------------------------------------------===//

#include "ingot/MiniFloat.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ingot;

namespace {

constexpr DType kFloats[] = {DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2,
                             DType::F8E5M2FNUZ, DType::F4E2M1};

int codes(DType t) { return t == DType::F4E2M1 ? 16 : 256; }

TEST(MiniFloat, EveryCodeRoundTrips) {
  for (DType t : kFloats)
    for (int c = 0; c < codes(t); ++c) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " code " + std::to_string(c));
      const double v = miniFloatToDouble(t, uint8_t(c));
      if (std::isnan(v))
        continue;
      EXPECT_EQ(doubleToMiniFloat(t, v, false), c);
      if (!std::isinf(v)) // saturation turns e5m2's infinities into its max
        EXPECT_EQ(doubleToMiniFloat(t, v, true), c);
    }
}

TEST(MiniFloat, LargestValuesAndSpecials) {
  EXPECT_EQ(miniFloatToDouble(DType::F8E4M3FN, 0x7e), 448.0);
  EXPECT_EQ(miniFloatToDouble(DType::F8E4M3FNUZ, 0x7f), 240.0);
  EXPECT_EQ(miniFloatToDouble(DType::F8E5M2, 0x7b), 57344.0);
  EXPECT_EQ(miniFloatToDouble(DType::F8E5M2FNUZ, 0x7f), 57344.0);
  EXPECT_EQ(miniFloatToDouble(DType::F4E2M1, 0x7), 6.0);
  EXPECT_EQ(miniFloatToDouble(DType::F8E5M2, 0x7c), INFINITY);
  EXPECT_TRUE(std::isnan(miniFloatToDouble(DType::F8E4M3FN, 0x7f)));
  EXPECT_TRUE(std::isnan(miniFloatToDouble(DType::F8E4M3FNUZ, 0x80)));
  // Smallest subnormals: 2^-9 (e4m3fn), 2^-16 (e5m2), 0.5 (e2m1).
  EXPECT_EQ(miniFloatToDouble(DType::F8E4M3FN, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(miniFloatToDouble(DType::F8E5M2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(miniFloatToDouble(DType::F4E2M1, 0x01), 0.5);
  // Past the top: saturate clips, otherwise infinity or NaN.
  EXPECT_EQ(doubleToMiniFloat(DType::F8E4M3FN, 1e6, true), 0x7e);
  EXPECT_EQ(doubleToMiniFloat(DType::F8E4M3FN, -1e6, false), 0xff);
  EXPECT_EQ(doubleToMiniFloat(DType::F8E5M2, INFINITY, false), 0x7c);
  EXPECT_EQ(doubleToMiniFloat(DType::F8E5M2, -INFINITY, true), 0xfb);
  EXPECT_EQ(doubleToMiniFloat(DType::F8E5M2FNUZ, 1e9, false), 0x80);
  EXPECT_EQ(doubleToMiniFloat(DType::F4E2M1, 1e9, false), 0x7);
  // FNUZ has no -0.
  EXPECT_EQ(doubleToMiniFloat(DType::F8E4M3FNUZ, -0.0, true), 0x00);
  EXPECT_EQ(doubleToMiniFloat(DType::F8E4M3FN, -0.0, true), 0x80);
}

TEST(MiniFloat, RoundsToNearestEven) {
  // e4m3fn around 1: step 1/8. 1 + 1/16 ties to 1 (even), 1 + 3/16 to 1.25.
  EXPECT_EQ(miniFloatToDouble(DType::F8E4M3FN,
                              doubleToMiniFloat(DType::F8E4M3FN, 1.0625, true)),
            1.0);
  EXPECT_EQ(miniFloatToDouble(DType::F8E4M3FN,
                              doubleToMiniFloat(DType::F8E4M3FN, 1.1875, true)),
            1.25);
  // 464 lies halfway between 448 and 480 (not finite in e4m3fn): even is
  // 448; 470 rounds up to 480, past the top, so NaN without saturation.
  EXPECT_EQ(doubleToMiniFloat(DType::F8E4M3FN, 464, false), 0x7e);
  EXPECT_EQ(doubleToMiniFloat(DType::F8E4M3FN, 470, false), 0x7f);
  // e2m1: 0.25 ties to 0, 0.75 to 1, 2.5 to 2, 5 to 4.
  EXPECT_EQ(doubleToMiniFloat(DType::F4E2M1, 0.25, true), 0x0);
  EXPECT_EQ(doubleToMiniFloat(DType::F4E2M1, 0.75, true), 0x2);
  EXPECT_EQ(doubleToMiniFloat(DType::F4E2M1, 2.5, true), 0x4);
  EXPECT_EQ(doubleToMiniFloat(DType::F4E2M1, 5.0, true), 0x6);
}

TEST(MiniFloat, NarrowIntegers) {
  EXPECT_EQ(narrowIntValue(DType::I4, 0x0e), -2);
  EXPECT_EQ(narrowIntValue(DType::U4, 0x0e), 14);
  EXPECT_EQ(narrowIntValue(DType::I2, 0x02), -2);
  EXPECT_EQ(narrowIntWrap(DType::I4, -2), 0x0e);
  EXPECT_EQ(narrowIntWrap(DType::U2, 7), 0x03);
  // Floats truncate; out of range, infinite or NaN give 0.
  EXPECT_EQ(narrowIntFromDouble(DType::I4, -8.9), 0x08);
  EXPECT_EQ(narrowIntFromDouble(DType::I4, -9.0), 0x00);
  EXPECT_EQ(narrowIntFromDouble(DType::U4, 15.7), 0x0f);
  EXPECT_EQ(narrowIntFromDouble(DType::U2, -0.5), 0x00);
  EXPECT_EQ(narrowIntFromDouble(DType::I2, NAN), 0x00);
  EXPECT_EQ(narrowIntFromDouble(DType::I2, -INFINITY), 0x00);
}

} // namespace
