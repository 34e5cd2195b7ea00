//===- HsumAvx512Test.cpp - Sixteen horizontal sums at once ---------------===//
//
// hsum16x16 must give each lane exactly the bits hsum16 gives its vector
// alone (the "nk" linear kernels use one for blocks of 16 sums and the
// other elsewhere, and batch invariance compares them). Lanes of mixed
// signs and magnitudes 2^-20..2^20 make any other pairing of the 16 lanes
// round differently, so a wrong lane or tree shows up in a few vectors.
//
//===----------------------------------------------------------------------===//

#include "cpu/HsumAvx512.h"
#include "cpu/Gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace ingot;

namespace {

__attribute__((target("avx512f"))) void
hsumBothWays(const float (&x)[16][16], float (&one)[16], float (&all)[16]) {
  __m512 v[16];
  for (int p = 0; p < 16; ++p) {
    v[p] = _mm512_loadu_ps(x[p]);
    one[p] = cpu::hsum16(v[p]);
  }
  _mm512_storeu_ps(all, cpu::hsum16x16(v));
}

TEST(HsumAvx512, SixteenAtOnceEqualOneAtATime) {
  if (!cpu::gemmIsaSupported(cpu::GemmIsa::Avx512))
    GTEST_SKIP() << "no AVX-512F on this CPU";
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-20, 20);
  int differsFromLaneOrder = 0;
  for (int round = 0; round < 200; ++round) {
    float x[16][16], one[16], all[16];
    for (auto &row : x)
      for (float &f : row)
        f = std::ldexp(mant(gen), expo(gen));
    hsumBothWays(x, one, all);
    for (int p = 0; p < 16; ++p) {
      EXPECT_EQ(0, std::memcmp(&one[p], &all[p], sizeof(float)))
          << "round " << round << " lane " << p << ": " << one[p] << " vs "
          << all[p];
      float seq = 0;
      for (float f : x[p])
        seq += f;
      differsFromLaneOrder += seq != one[p];
    }
  }
  // The inputs are spread enough that the tree's order matters.
  EXPECT_GT(differsFromLaneOrder, 100);
}

} // namespace
