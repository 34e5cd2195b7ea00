//===- ConvImplicitTest.cpp - implicit conv vs a float64 reference --------===//
//
// ConvImplicit.cpp reads the input through stride-phase planes and drops
// the garbage columns past each output line; these cases move every edge
// of that: strides 1-3 per dim, dilations, asymmetric pads, 1-D windows,
// channels that fill no tile exactly. Each output is a sequential FMA
// chain over the same k terms on every ISA, so AVX2 and AVX-512 give the
// same bits, and the error against float64 is within the rigorous bound
// of a k-term sum, (k + 2) u Σ|term|, u = 2^-24.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "cpu/ConvImplicit.h"
#include "cpu/StepCache.h"

#include <algorithm>
#include <bit>
#include <cmath>

using namespace ingot;
using namespace ingot::test;

namespace {

struct Case {
  int64_t c, h, wd, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

cpu::Window windowOf(const Case &k) {
  cpu::Window w{};
  const int64_t in[3] = {1, k.h, k.wd}, kern[3] = {1, k.kh, k.kw},
                st[3] = {1, k.sh, k.sw}, dil[3] = {1, k.dh, k.dw},
                pad[3] = {0, k.pt, k.pl}, end[3] = {0, k.pb, k.pr};
  for (int d = 0; d < 3; ++d) {
    w.in[d] = in[d], w.k[d] = kern[d], w.stride[d] = st[d];
    w.dil[d] = dil[d], w.pad[d] = pad[d], w.padEnd[d] = end[d];
    w.out[d] =
        (in[d] + pad[d] + end[d] - (kern[d] - 1) * dil[d] - 1) / st[d] + 1;
  }
  return w;
}

/// y in float64 and, per output, Σ|term| (bias included) for the bound.
void reference(const Case &k, const cpu::Window &w, const Tensor &x,
               const Tensor &wt, const Tensor &b, std::vector<double> *y,
               std::vector<double> *mag) {
  for (int64_t o = 0; o < k.m; ++o)
    for (int64_t i = 0; i < w.out[1]; ++i)
      for (int64_t j = 0; j < w.out[2]; ++j) {
        double acc = ptr<float>(b)[o], sum = std::fabs(acc);
        for (int64_t c = 0; c < k.c; ++c)
          for (int64_t a = 0; a < k.kh; ++a)
            for (int64_t e = 0; e < k.kw; ++e) {
              const int64_t r = i * k.sh - k.pt + a * k.dh;
              const int64_t s = j * k.sw - k.pl + e * k.dw;
              if (r < 0 || r >= k.h || s < 0 || s >= k.wd)
                continue;
              const double t =
                  double(ptr<float>(x)[(c * k.h + r) * k.wd + s]) *
                  ptr<float>(wt)[((o * k.c + c) * k.kh + a) * k.kw + e];
              acc += t, sum += std::fabs(t);
            }
        y->push_back(acc);
        mag->push_back(sum);
      }
}

std::vector<cpu::GemmIsa> isas() {
  std::vector<cpu::GemmIsa> out;
  for (cpu::GemmIsa isa : {cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512})
    if (cpu::gemmIsaSupported(isa))
      out.push_back(isa);
  return out;
}

TEST(ConvImplicit, RowBlocksEndInTwoThirdTilesNotATinyOne) {
  auto heights = [](int64_t m, int mr) {
    std::vector<std::pair<int64_t, int>> out; // (rows, height)
    int64_t next = 0;
    for (const cpu::RowBlock &b : cpu::rowBlocks(m, mr)) {
      EXPECT_EQ(b.r0, next) << "m = " << m;
      EXPECT_LE(b.rows, b.height) << "m = " << m;
      next = b.r0 + b.rows;
      out.emplace_back(b.rows, b.height);
    }
    EXPECT_EQ(next, m);
    return out;
  };
  using V = std::vector<std::pair<int64_t, int>>;
  EXPECT_EQ(heights(16, 12), (V{{8, 8}, {8, 8}}));
  EXPECT_EQ(heights(13, 12), (V{{8, 8}, {5, 8}}));
  EXPECT_EQ(heights(24, 12), (V{{12, 12}, {12, 12}}));
  EXPECT_EQ(heights(28, 12), (V{{12, 12}, {8, 8}, {8, 8}}));
  EXPECT_EQ(heights(3, 12), (V{{3, 4}}));
  EXPECT_EQ(heights(8, 6), (V{{4, 4}, {4, 4}}));
  EXPECT_EQ(heights(7, 6), (V{{4, 4}, {3, 4}}));
  for (int64_t m = 1; m < 100; ++m)
    heights(m, 12), heights(m, 6);
}

TEST(ConvImplicit, MatchesFloat64WithinTheSumBound) {
  if (isas().empty())
    GTEST_SKIP() << "no AVX2: convs take the im2col path";
  const std::vector<Case> cases = {
      {16, 40, 40, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, // YOLO's 3x3
      {3, 33, 35, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},  // a stem, odd sizes
      {5, 21, 19, 13, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0},  // asymmetric pads
      {4, 17, 23, 9, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4},   // dilated, wide pads
      {6, 12, 30, 11, 3, 1, 3, 1, 1, 1, 1, 0, 1, 0},  // 3x1 with row stride
      {6, 12, 30, 25, 1, 3, 1, 2, 1, 1, 0, 1, 0, 1},  // 1x3 with col stride
      {7, 9, 64, 8, 2, 4, 1, 3, 1, 2, 0, 0, 0, 0},    // no pads, stride 3
      {8, 20, 20, 40, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0},  // strided 1x1
      {2, 5, 200, 24, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3},  // a 1-D window
      {70, 10, 21, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, // k = 630: 3 passes
      // 1x1, stride 1, no pads: read in place, the last tile from a
      // padded copy (ASan sees a read past x).
      {20, 9, 13, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},  // 117 positions
      {300, 8, 9, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},  // k = 300: 2 passes
      {12, 16, 16, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, // whole tiles only
      // 64 channels or more in pairs of vectors: AVX-512's channel
      // tiles, groups of 4 and 2 vectors (96 = 64 + 32), in place with a
      // tail, strided, 11 passes of k; 72 channels take the row tiles.
      {9, 14, 17, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {20, 9, 13, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {7, 11, 19, 160, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {300, 6, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {20, 9, 13, 72, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      // Channel tiles read x at the stride (no phase planes): a strided
      // 1x1 in place, a dilated 5x5 with wide pads, a stride of 3 by 2.
      {8, 20, 21, 64, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0},
      {4, 17, 23, 64, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4},
      {5, 19, 22, 128, 3, 3, 3, 2, 1, 1, 1, 0, 1, 1},
      // 32 channels: one pair of vectors, channel tiles for a window only.
      {6, 15, 18, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      // A 1x1 over many channels in place (channel tiles only).
      {130, 7, 9, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      // Unpadded windows read x in place. Row tiles: the channels whose
      // reads run past x's end (3 of 5 on 3x4 planes) from a copy; a
      // dilated window; openWakeWord's 3x1.
      {24, 12, 10, 24, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {5, 3, 4, 20, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {6, 12, 20, 16, 3, 3, 1, 1, 2, 2, 0, 0, 0, 0},
      // Channel tiles at any stride, and 3 vectors (48, and 112 = 64 +
      // 48) on 8-position tiles, padded and not; 80 = 64 + 16 takes the
      // row tiles.
      {7, 15, 17, 64, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0},
      {10, 12, 4, 96, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {48, 9, 13, 48, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1},
      {11, 14, 6, 112, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {9, 10, 11, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
  };
  Rng rng(23);
  for (const Case &k : cases) {
    const cpu::Window w = windowOf(k);
    Tensor x = rng.uniform({k.c, k.h, k.wd});
    Tensor wt = rng.uniform({k.m, k.c, k.kh, k.kw});
    Tensor b = rng.uniform({k.m});
    std::vector<double> ref, mag;
    reference(k, w, x, wt, b, &ref, &mag);
    const double bound = double(k.c * k.kh * k.kw + 2) * 0x1p-24;
    std::vector<float> first;
    for (cpu::GemmIsa isa : isas()) {
      cpu::KernelContext ctx("conv", "test/conv", nullptr, &testPool());
      std::vector<float> y(size_t(k.m * w.outSize()), NAN);
      cpu::implicitConvOn(isa, ctx, w, ptr<float>(x), k.c, ptr<float>(wt),
                          false, k.m, ptr<float>(b), cpu::ConvActivation{},
                          y.data());
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_LE(std::fabs(y[i] - ref[i]), bound * mag[i])
            << cpu::gemmIsaName(isa) << " case h=" << k.h << " w=" << k.wd
            << " output " << i << ": got " << y[i] << ", want " << ref[i];
      if (first.empty())
        first = y;
      else
        EXPECT_EQ(y, first) << "ISAs disagree, case h=" << k.h;
    }
  }
}

// 20 channels take the row tiles; 64 (AVX-512) the channel tiles, whose
// results are transposed into y.
TEST(ConvImplicit, ThreadsCacheAndActivationKeepTheBits) {
  if (isas().empty())
    GTEST_SKIP() << "no AVX2: convs take the im2col path";
  for (int64_t m : {20, 64}) {
    const Case k{12, 26, 26, m, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
    const cpu::Window w = windowOf(k);
    Rng rng(29);
    Tensor x = rng.uniform({k.c, k.h, k.wd}),
           wt = rng.uniform({k.m, k.c, 3, 3}), b = rng.uniform({k.m});
    const cpu::GemmIsa isa = isas().back();
    auto run = [&](ThreadPool *pool, cpu::StepCache *cache, bool constant,
                   cpu::linear::Act linearAct) {
      cpu::ConvActivation act;
      act.act = linearAct;
      cpu::KernelContext ctx("conv", "test/conv", nullptr, pool);
      ctx.setStepCache(cache);
      std::vector<float> y(size_t(k.m * w.outSize()));
      cpu::implicitConvOn(isa, ctx, w, ptr<float>(x), k.c, ptr<float>(wt),
                          constant, k.m, ptr<float>(b), act, y.data());
      return y;
    };
    const std::vector<float> serial =
        run(nullptr, nullptr, false, cpu::linear::Act::None);
    EXPECT_EQ(run(&testPool(), nullptr, false, cpu::linear::Act::None), serial);
    cpu::StepCache cache; // packed weights kept, then reused
    EXPECT_EQ(run(&testPool(), &cache, true, cpu::linear::Act::None), serial);
    EXPECT_EQ(run(&testPool(), &cache, true, cpu::linear::Act::None), serial);
    // The fused activation is linear's function applied to the same sums.
    std::vector<float> silu = serial;
    cpu::linear::activate(cpu::linear::Act::Silu, silu.data(),
                          int64_t(silu.size()));
    EXPECT_EQ(run(&testPool(), nullptr, false, cpu::linear::Act::Silu), silu)
        << m << " channels";
  }
}

// The fused leaky_relu and clamp are the unary kernel's x < 0 ? a·x : x,
// then ONNX Max and Min by a constant with the tensor first (the fused
// program's maxNan/minNan): NaN stays NaN, -0 stays -0 against a 0 bound.
TEST(ConvActivation, LeakyReluThenClampAsTheUnfusedOps) {
  cpu::ConvActivation act;
  act.leaky = true, act.alpha = 0.2f, act.lo = -0.4f, act.hi = 0.0f;
  std::vector<float> y = {-5.0f, -1.0f,     -0.0f,    0.0f,  1.5f,
                          NAN,   -INFINITY, INFINITY, -2.0f, 0.1f};
  Rng rng(5);
  Tensor r = rng.uniform({70});
  for (int64_t i = 0; i < 70; ++i)
    y.push_back(4 * ptr<float>(r)[i] - 2);
  std::vector<float> got = y;
  act.apply(got.data(), int64_t(got.size()));
  for (size_t i = 0; i < y.size(); ++i) {
    float v = y[i] < 0 ? 0.2f * y[i] : y[i];
    v = v != v ? v : (v < -0.4f ? -0.4f : v);
    v = v != v ? v : (0.0f < v ? 0.0f : v);
    EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(v))
        << "input " << y[i];
  }
  EXPECT_TRUE(std::signbit(got[2])); // -0 kept
}

} // namespace
