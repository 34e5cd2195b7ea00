//===- CudaEmuRopeTest.cpp - rope.cuh run on the host -----------*- C++ -*-===//
//
// Runs the CUDA rope template under the emulation harness
// (test/unit/cuda_emu) and compares it with a float64 reference written
// here from runtime/src/cpu/Rope.cpp and RopeMath.h (rotate-half pairs
// (i, i + rotary_dim/2), pass-through dims, "none"/"linear"/"llama3"
// frequencies). Positions go up to 2^17, where angles formed in f32 would be
// off by ~1e-2 rad, so the tolerance below also checks that the kernel forms
// them in double, as the CPU does.
//
//===----------------------------------------------------------------------===//

#include "attention.cuh"

#include "CudaEmuTestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using ingot_k::i32;
using ingot_k::i64;
using ingot_k::RopeParams;
using namespace ingot_test;

// The f32 rotation rounds cos/sin (2^-24 relative) and two products and a
// difference of values <= 1: a few ulp of 1, ~3e-7. Wrong pairing, a wrong
// frequency or an f32 angle at position ~1e5 are off by 1e-3 or more.
constexpr double kRopeTol = 1e-6;

template <int HEADS, int HEAD_DIM, int ROT, typename I>
void checkRope(const RopeParams &r, bool inPlace, unsigned seed) {
  const i64 tokens = 6;
  std::mt19937 gen(seed);
  const std::vector<float> x0 = randomFloats(tokens * HEADS * HEAD_DIM, gen);
  std::vector<I> pos = {0, 1, 8191, 8192, 100000, 131071};
  std::vector<float> x = x0, y(x0.size(), nanF());
  float *out = inPlace ? x.data() : y.data();
  const i64 items = tokens * HEADS * HEAD_DIM / 2;
  ingot_emu::launch({unsigned((items + 255) / 256)}, {256}, [&] {
    ingot_k::rope<HEADS, HEAD_DIM, ROT, I>(x.data(), pos.data(), out, r,
                                           tokens);
  });
  std::vector<double> want(x0.size());
  for (i64 t = 0; t < tokens; ++t)
    for (int h = 0; h < HEADS; ++h) {
      const i64 at = (t * HEADS + h) * HEAD_DIM;
      refRopeHead(x0.data() + at, want.data() + at, i64(pos[t]), ROT, HEAD_DIM,
                  r);
    }
  std::vector<float> got(out, out + x0.size());
  EXPECT_LT(relError(got, want), kRopeTol);
  if (!inPlace) {
    EXPECT_EQ(x, x0) << "the input was changed";
  }
}

TEST(CudaEmuRope, FullRotaryNoScaling) {
  checkRope<3, 16, 16, i64>(ropeNone(10000.0), false, 1);
}

// rotary_dim 16 of theta 500000 puts frequencies in all three llama3 bands.
TEST(CudaEmuRope, PartialRotaryLlama3InPlace) {
  checkRope<2, 24, 16, i32>(ropeLlama3(), true, 2);
}

TEST(CudaEmuRope, PartialRotaryLinearScaling) {
  RopeParams r = ropeNone(1e6);
  r.scaling = 1;
  r.factor = 4.0;
  checkRope<2, 12, 4, i64>(r, false, 3);
}

// cos/sin are the CPU's f32 values bit for bit: the frequency and the
// angle in double, rounded once (ropeAngles).
TEST(CudaEmuRope, CosSinAreTheCpuBits) {
  RopeParams linear = ropeNone(1e6);
  linear.scaling = 1;
  linear.factor = 2.5;
  for (const RopeParams &r : {ropeNone(10000.0), linear, ropeLlama3()})
    for (i64 pos : {0, 1, 17, 8191, 8192, 100000, 131071})
      for (int i = 0; i < 64; ++i) {
        float c, s;
        ingot_k::ropeCosSin(pos, i, 128, r, c, s);
        const double angle = double(pos) * refInvFreq(i, 128, r);
        EXPECT_EQ(c, float(std::cos(angle))) << pos << " " << i;
        EXPECT_EQ(s, float(std::sin(angle))) << pos << " " << i;
      }
}

// rope_paged_attention's rotated K rows are bitwise those of `rope` then
// paged_attention's plain write, as on the CPU.
TEST(CudaEmuRope, FusedKvWriteMatchesRopeThenWrite) {
  constexpr int KV = 2, D = 24, ROT = 16;
  const i64 tokens = 5, slots = 8;
  std::mt19937 gen(4);
  const std::vector<float> k = randomFloats(tokens * KV * D, gen);
  const std::vector<float> v = randomFloats(tokens * KV * D, gen);
  const std::vector<i64> pos = {3, 9000, 70000, 5, 131000};
  const std::vector<i64> slot = {6, 1, 7, 2, 0};
  const RopeParams r = ropeLlama3();
  const ingot_k::AttnArgs a = {4,      2,      4 * KV * D, 4 * D, D,
                               KV * D, KV * D, KV * D,     0,     0,
                               0,      0,      1.f,        0.f,   0};
  std::vector<float> fusedK(slots * KV * D, 0.f), fusedV = fusedK;
  std::vector<float> plainK = fusedK, plainV = fusedK, rotated = k;
  ingot_emu::launch({unsigned(tokens)}, {128}, [&] {
    ingot_k::pagedKvWrite<KV, D, ROT, i64>(k.data(), v.data(), pos.data(),
                                           slot.data(), fusedK.data(),
                                           fusedV.data(), a, r, tokens);
  });
  ingot_emu::launch({1}, {256}, [&] {
    ingot_k::rope<KV, D, ROT, i64>(rotated.data(), pos.data(), rotated.data(),
                                   r, tokens);
  });
  ingot_emu::launch({unsigned(tokens)}, {128}, [&] {
    ingot_k::pagedKvWrite<KV, D, 0, i64>(rotated.data(), v.data(), pos.data(),
                                         slot.data(), plainK.data(),
                                         plainV.data(), a, r, tokens);
  });
  EXPECT_EQ(0, std::memcmp(fusedK.data(), plainK.data(), fusedK.size() * 4));
  EXPECT_EQ(fusedV, plainV);
}

} // namespace
