//===- MathF32Test.cpp - Vectorised exp, sigmoid, tanh and erf ------------===//
//
// Each ISA's build of the vectorised exp/sigmoid over a dense sweep of the
// finite range, against double precision. exp is a ~1.5 ulp approximation;
// the bounds (2.5 ulp for exp, 5 ulp for sigmoid, which adds an add, a
// divide and a multiply) are far below what a wrong coefficient gives.
//
//===----------------------------------------------------------------------===//

#include "cpu/MathF32.h"
#include "IsaTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace ingot;
using namespace ingot::test;

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
  for (cpu::GemmIsa isa : supportedIsas()) {
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

TEST(MathF32, Avx512ExpScalesAsTheTwoProductsDo) {
  // AVX-512 builds p·2^n with one vscalefps, the other ISAs with two
  // products (the first exact): the same single rounding, subnormal
  // results included, so the bits agree with the AVX2 build.
  if (!cpu::gemmIsaSupported(cpu::GemmIsa::Avx512) ||
      !cpu::gemmIsaSupported(cpu::GemmIsa::Avx2))
    GTEST_SKIP() << "needs AVX-512 and AVX2";
  std::vector<float> x;
  for (float v = -104.5f; v < 89.0f; v += 0.00173f)
    x.push_back(v);
  const int64_t n = int64_t(x.size());
  std::vector<float> a(x.size()), b(x.size());
  cpu::expF32(cpu::GemmIsa::Avx512, x.data(), 0.0f, a.data(), n);
  cpu::expF32(cpu::GemmIsa::Avx2, x.data(), 0.0f, b.data(), n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(a[i], b[i]) << "x=" << x[i];
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
  for (cpu::GemmIsa isa : supportedIsas()) {
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

TEST(MathF32, ErfAndErfc) {
  // Dense over [-6, 9]: erf within 2e-7 absolute. erfc keeps a relative
  // bound for x >= 0.5, where it is tiny (GELU's negative tail is
  // 0.5·x·erfc(-x/√2)): the fit's exponent -x² carries its f32 rounding,
  // about x²·6e-8 relative (measured 1.8e-6 at x = 3.9, 7.4e-6 at 8.6),
  // so the bound is 1e-6·x²; below 0.5 it is 3e-7 absolute (1 - the
  // series, measured 2.4e-7).
  std::vector<float> x;
  for (float v = -6.0f; v < 9.0f; v += 0.00137f)
    x.push_back(v);
  const int64_t n = int64_t(x.size());
  std::vector<float> e(x.size()), c(x.size());
  cpu::erfF32(x.data(), e.data(), n);
  cpu::erfcF32(x.data(), c.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    ASSERT_NEAR(e[i], std::erf(v), 2e-7) << "erf x=" << x[i];
    if (v >= 0.5)
      ASSERT_LE(std::fabs(c[i] - std::erfc(v)),
                std::max(1e-6 * v * v, 5e-7) * std::erfc(v))
          << "erfc x=" << x[i];
    else
      ASSERT_NEAR(c[i], std::erfc(v), 3e-7) << "erfc x=" << x[i];
  }
  // A value's result does not depend on where it lies in the array (the
  // last chunk is padded, not run through a scalar tail).
  for (int64_t at : {int64_t(0), int64_t(5), n - 3}) {
    float one = 0;
    cpu::erfcF32(&x[at], &one, 1);
    EXPECT_EQ(one, c[at]) << "x=" << x[at];
    cpu::erfF32(&x[at], &one, 1);
    EXPECT_EQ(one, e[at]) << "x=" << x[at];
  }
}

TEST(MathF32, GeluErfMatchesDoubleReference) {
  // Against 0.5·x·erfc(−x/√2) in double, dense over [-14, 9] (the tail
  // underflows to 0 near -14), on every ISA. The fit's exponent
  // −1.26551223 + u·P(u) − z² cancels near z = 0, so the f32 roundings of
  // its Horner steps reach e's relative error there: measured 2.6e-7 with
  // GCC -O3's contractions and 4.8e-7 at -O1 (the ASan build), hence 1e-6
  // for x >= 0 (1 − c/2 cannot cancel further: c/2 <= 1/2). x < 0 adds the
  // f32 roundings of z = |x|/√2 and of −z², which grow like x² (as
  // erfcF32's bound): 1e-6 + 1.5e-7·x², measured 1.5e-5 at x = -13 with
  // FMA and 1.8e-5 at -12.5 without. Where Φ(x) is subnormal, also two of
  // its ulps times |x|.
  std::vector<float> x;
  for (float v = -14.0f; v < 9.0f; v += 0.00093f)
    x.push_back(v);
  const int64_t n = int64_t(x.size());
  std::vector<float> y(x.size());
  for (cpu::GemmIsa isa : supportedIsas()) {
    SCOPED_TRACE(cpu::gemmIsaName(isa));
    cpu::geluErfF32(isa, x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[i];
      const double ref = 0.5 * v * std::erfc(-v * M_SQRT1_2);
      const double bound = 1e-6 + (v >= 0 ? 0 : 1.5e-7 * v * v);
      const double floor = std::fabs(ref) < 1e-36 ? 3e-45 * std::fabs(v) : 0;
      ASSERT_LE(std::fabs(y[i] - ref), bound * std::fabs(ref) + floor)
          << "x=" << x[i] << " got " << y[i] << " want " << ref;
    }
  }
  // A value's bits do not depend on where it lies (a short tail takes the
  // same vector code), and in place gives the same.
  cpu::geluErfF32(x.data(), y.data(), n);
  for (int64_t at : {int64_t(0), int64_t(5), n - 3}) {
    float one = 0;
    cpu::geluErfF32(&x[at], &one, 1);
    EXPECT_EQ(one, y[at]) << "x=" << x[at];
  }
  std::vector<float> inPlace(x.begin() + 7, x.end());
  cpu::geluErfF32(inPlace.data(), inPlace.data(), int64_t(inPlace.size()));
  for (size_t i = 0; i < inPlace.size(); ++i)
    ASSERT_EQ(inPlace[i], y[i + 7]) << "x=" << x[i + 7];
  // ±0 keep their sign, +inf stays, and NaN propagates; -inf gives NaN
  // (-inf · Φ(-inf) = -inf · 0), as x·0.5·(1 + erf(x/√2)) does.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> special = {0.0f, -0.0f, inf, NAN, -inf, 40.0f, -40.0f};
  cpu::geluErfF32(special.data(), special.data(), int64_t(special.size()));
  EXPECT_TRUE(special[0] == 0.0f && !std::signbit(special[0]));
  EXPECT_TRUE(special[1] == 0.0f && std::signbit(special[1]));
  EXPECT_EQ(special[2], inf);
  EXPECT_TRUE(std::isnan(special[3]));
  EXPECT_TRUE(std::isnan(special[4]));
  EXPECT_EQ(special[5], 40.0f);
  EXPECT_EQ(special[6], 0.0f);
}
