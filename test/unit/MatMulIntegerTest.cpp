//===- MatMulIntegerTest.cpp - Exact 8-bit products on every engine -------===//
//
// Each engine this CPU supports (portable int16, AVX2 int16, AVX-512 VNNI)
// against a naive int64 triple loop: the result must be bit-exact for every
// signedness pair, scalar and per-column zero points (including the
// extremes 0, 127, 255, -128 that push the VNNI shifts furthest), and
// shapes that leave partial row tiles, column panels and k groups. With a
// scale (and bias), every engine's floats equal the int32 products
// converted, multiplied and added one rounding at a time, as the cast, mul
// and add kernels do.
//
//===----------------------------------------------------------------------===//

#include "cpu/MatMulInteger.h"

#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace ingot;
using namespace ingot::cpu;

namespace {

struct Case {
  int64_t rows, k, n;
  bool aUnsigned, bUnsigned, perColumn;
};

std::vector<uint8_t> randomBytes(std::mt19937_64 &rng, int64_t n) {
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (uint8_t &x : v)
    x = uint8_t(rng());
  return v;
}

int32_t value(const std::vector<uint8_t> &v, int64_t i, bool isUnsigned) {
  return isUnsigned ? int32_t(v[size_t(i)]) : int32_t(int8_t(v[size_t(i)]));
}

void check(QGemmIsa isa, const Case &c, ThreadPool *pool, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> a = randomBytes(rng, c.rows * c.k);
  std::vector<uint8_t> b = randomBytes(rng, c.k * c.n);
  std::vector<uint8_t> bz = randomBytes(rng, c.perColumn ? c.n : 1);
  // Extreme values at the corners.
  b[0] = 0x80;
  b.back() = 0x7f;
  bz[0] = c.bUnsigned ? 255 : 0x80;
  const uint8_t az = uint8_t(rng());
  QGemmArgs g;
  g.rows = c.rows;
  g.k = c.k;
  g.n = c.n;
  g.a = a.data();
  g.aUnsigned = c.aUnsigned;
  g.aZero = c.aUnsigned ? int32_t(az) : int32_t(int8_t(az));
  g.b = b.data();
  g.bUnsigned = c.bUnsigned;
  g.bZero = bz.data();
  g.bZeroPerColumn = c.perColumn;
  std::vector<int32_t> out(size_t(c.rows * c.n), 12345);
  g.c = out.data();
  qgemm(g, pool, isa);
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t want = 0;
      const int32_t zb = value(bz, c.perColumn ? j : 0, c.bUnsigned);
      for (int64_t kk = 0; kk < c.k; ++kk)
        want += int64_t(value(a, r * c.k + kk, c.aUnsigned) - g.aZero) *
                (value(b, kk * c.n + j, c.bUnsigned) - zb);
      ASSERT_EQ(out[size_t(r * c.n + j)], int32_t(want))
          << qgemmIsaName(isa) << " rows=" << c.rows << " k=" << c.k
          << " n=" << c.n << " at " << r << "," << j;
    }
  if (isa != QGemmIsa::Avx512Vnni)
    return;
  // B packed once (a weight's panels, kept per step) serves calls whose A
  // and A zero point differ: each must equal a call that packs B itself.
  const QPackedB packed = qpackBVnni(g, pool);
  for (int32_t aZero : {g.aZero, c.aUnsigned ? 255 - g.aZero : -g.aZero}) {
    g.aZero = aZero;
    std::vector<int32_t> fresh(out.size()), reused(out.size());
    g.c = fresh.data();
    qgemmVnni(g, pool);
    g.c = reused.data();
    qgemmVnni(g, pool, &packed);
    ASSERT_EQ(reused, fresh) << "rows=" << c.rows << " k=" << c.k
                             << " n=" << c.n << " aZero=" << aZero;
  }
}

TEST(MatMulInteger, EveryEngineIsExact) {
  const std::vector<Case> shapes = {
      {1, 1, 1, true, false, false},
      {7, 37, 19, true, false, false},
      {9, 64, 33, true, true, true},
      {13, 5, 65, false, false, true},
      {8, 128, 32, false, true, false},
      {33, 385, 70, true, false, true},
      // Every ragged last row tile of the VNNI engine's 6 (1 to 5 rows
      // above; 4, 5 and none here).
      {10, 40, 80, true, false, false},
      {11, 17, 64, false, true, true},
      {12, 24, 130, true, true, false},
  };
  uint64_t seed = 7;
  for (QGemmIsa isa :
       {QGemmIsa::Generic, QGemmIsa::Avx2, QGemmIsa::Avx512Vnni}) {
    if (!qgemmIsaSupported(isa))
      continue;
    for (Case c : shapes)
      for (int signs = 0; signs < 4; ++signs) {
        c.aUnsigned = signs & 1;
        c.bUnsigned = signs & 2;
        check(isa, c, nullptr, seed++);
        check(isa, c, &test::testPool(), seed++);
      }
  }
}

/// The float epilogue: per-column and one-value scales, with and without
/// a bias and a GELU, on every engine, against the exact products
/// converted by hand (the GELU by linear's own function over the whole
/// result: a value's bits do not depend on the tile it lands in).
TEST(MatMulInteger, ScaledResultIsTheCastMulAddChain) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<float> u(-0.01f, 0.01f);
  for (QGemmIsa isa :
       {QGemmIsa::Generic, QGemmIsa::Avx2, QGemmIsa::Avx512Vnni}) {
    if (!qgemmIsaSupported(isa))
      continue;
    for (const Case &c : {Case{7, 37, 19, true, false, true},
                          Case{33, 385, 70, true, false, false}})
      for (int variant = 0; variant < 8; ++variant) {
        const bool perColumn = variant & 1, withBias = variant & 2;
        const linear::Act act =
            variant & 4 ? linear::Act::Gelu : linear::Act::None;
        const std::vector<uint8_t> a = randomBytes(rng, c.rows * c.k);
        const std::vector<uint8_t> b = randomBytes(rng, c.k * c.n);
        std::vector<float> scale(size_t(perColumn ? c.n : 1)),
            bias(size_t(c.n));
        for (float &v : scale)
          v = u(rng);
        for (float &v : bias)
          v = 100 * u(rng);
        QGemmArgs g;
        g.rows = c.rows, g.k = c.k, g.n = c.n;
        g.a = a.data(), g.aUnsigned = true, g.aZero = 131;
        g.b = b.data(), g.bUnsigned = false;
        std::vector<int32_t> exact(size_t(c.rows * c.n));
        g.c = exact.data();
        qgemm(g, nullptr, QGemmIsa::Generic);
        std::vector<float> got(exact.size(), -1.0f);
        g.c = reinterpret_cast<int32_t *>(got.data());
        g.scale = scale.data();
        g.scalePerColumn = perColumn;
        g.bias = withBias ? bias.data() : nullptr;
        g.act = act;
        qgemm(g, &test::testPool(), isa);
        std::vector<float> want(exact.size());
        for (int64_t i = 0; i < c.rows * c.n; ++i) {
          const int64_t j = i % c.n;
          volatile float product =
              float(exact[size_t(i)]) * scale[size_t(perColumn ? j : 0)];
          want[size_t(i)] = withBias ? product + bias[size_t(j)] : product;
        }
        linear::activate(act, want.data(), int64_t(want.size()));
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_EQ(got[i], want[i])
              << qgemmIsaName(isa) << " variant " << variant << " at " << i;
      }
  }
}

} // namespace
