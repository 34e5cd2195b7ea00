//===- MathF32Test.cpp - Vectorised exp, sigmoid and tanh -----------------===//
//
// Each ISA's build of the vectorised exp/sigmoid over a dense sweep of the
// finite range, against double precision. exp is a ~1.5 ulp approximation;
// the bounds (2.5 ulp for exp, 5 ulp for sigmoid, which adds an add, a
// divide and a multiply) are far below what a wrong coefficient gives.
//
//===----------------------------------------------------------------------===//

#include "cpu/MathF32.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace ingot;

namespace {

/// Checks got against a double reference: relative for normal results,
/// within one subnormal step below FLT_MIN, inf above FLT_MAX.
void expectF32Close(float x, float got, double ref, double rtol) {
  if (ref > std::numeric_limits<float>::max()) {
    ASSERT_TRUE(std::isinf(got)) << x;
  } else if (ref < std::numeric_limits<float>::min()) {
    ASSERT_LE(std::fabs(got - ref), 1.5e-45) << x;
  } else {
    ASSERT_LE(std::fabs(got - ref), rtol * ref) << "x=" << x << " got " << got;
  }
}

TEST(MathF32, ExpAndSigmoidEveryIsa) {
  // A dense sweep of the whole finite range (odd length, so the padded tail
  // is used too) through each ISA's build, against double precision.
  std::vector<float> x;
  for (float v = -104.5f; v < 89.0f; v += 0.000731f)
    x.push_back(v);
  x.push_back(-0.0f);
  const int64_t n = int64_t(x.size());
  std::vector<float> y(x.size()), s(x.size());
  for (cpu::GemmIsa isa :
       {cpu::GemmIsa::Generic, cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512}) {
    if (!cpu::gemmIsaSupported(isa))
      continue;
    SCOPED_TRACE(cpu::gemmIsaName(isa));
    cpu::expF32(isa, x.data(), 0.0f, y.data(), n);
    cpu::sigmoidF32(isa, x.data(), s.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::exp(double(x[i]));
      // exp: ~1.5 ulp; sigmoid adds an add, a divide and a multiply.
      expectF32Close(x[i], y[i], e, 1.5e-7);
      expectF32Close(x[i], s[i], x[i] < 0 ? e / (1 + e) : 1 / (1 + 1 / e),
                     3e-7);
    }
  }
  // In place, with a shift (softmax's use), and the special values.
  std::vector<float> shifted = x;
  cpu::expF32(shifted.data(), 2.5f, shifted.data(), n);
  for (int64_t i = 0; i < n; i += 97)
    expectF32Close(x[i], shifted[i], std::exp(double(x[i] - 2.5f)), 1.5e-7);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> special = {inf, -inf, NAN, 1000.0f, -1000.0f, 0.0f, 1.0f};
  cpu::expF32(special.data(), 0.0f, special.data(), 7);
  EXPECT_TRUE(std::isinf(special[0]));
  EXPECT_EQ(special[1], 0.0f);
  EXPECT_TRUE(std::isnan(special[2]));
  EXPECT_TRUE(std::isinf(special[3]));
  EXPECT_EQ(special[4], 0.0f);
  EXPECT_EQ(special[5], 1.0f);
  EXPECT_NEAR(special[6], std::exp(1.0), 3e-7);
  std::vector<float> sig = {inf, -inf, NAN, 0.0f};
  cpu::sigmoidF32(sig.data(), sig.data(), 4);
  EXPECT_EQ(sig[0], 1.0f);
  EXPECT_EQ(sig[1], 0.0f);
  EXPECT_TRUE(std::isnan(sig[2]));
  EXPECT_EQ(sig[3], 0.5f);
}

} // namespace

TEST(MathF32, TanhEveryIsa) {
  // A dense sweep through both branches (the polynomial below |x| = 0.625,
  // the exp form above) and into saturation, each ISA against double.
  // Bound: 3 ulp relative (a wrong coefficient or branch point gives
  // errors of 1e-4 and more); tiny inputs must come back unchanged.
  std::vector<float> x;
  for (float v = -12.0f; v < 12.0f; v += 0.000377f)
    x.push_back(v);
  for (float v = 1e-30f; v < 1e-3f; v *= 1.7f)
    x.insert(x.end(), {v, -v});
  const int64_t n = int64_t(x.size());
  std::vector<float> y(x.size());
  for (cpu::GemmIsa isa :
       {cpu::GemmIsa::Generic, cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512}) {
    if (!cpu::gemmIsaSupported(isa))
      continue;
    SCOPED_TRACE(cpu::gemmIsaName(isa));
    cpu::tanhF32(isa, x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double ref = std::tanh(double(x[i]));
      ASSERT_LE(std::fabs(y[i] - ref), 3.6e-7 * std::fabs(ref) + 1e-45)
          << "x=" << x[i] << " got " << y[i];
      ASSERT_EQ(std::signbit(y[i]), std::signbit(x[i])) << x[i];
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> special = {inf, -inf, NAN, 0.0f, -0.0f, 100.0f};
  cpu::tanhF32(special.data(), special.data(), 6);
  EXPECT_EQ(special[0], 1.0f);
  EXPECT_EQ(special[1], -1.0f);
  EXPECT_TRUE(std::isnan(special[2]));
  EXPECT_EQ(special[3], 0.0f);
  EXPECT_TRUE(std::signbit(special[4]) && special[4] == 0.0f);
  EXPECT_EQ(special[5], 1.0f);
}
