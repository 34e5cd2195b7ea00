//===- CudaEmuLinearTest.cpp - The CUDA linear template on the CPU --------===//
//
// Runs linear.cuh (codegen/kernels/cuda) under the CPU emulation of
// CudaEmulation.h against a float64 reference of the CPU kernel's math
// (runtime/src/cpu/Linear.cpp): y = act(x·Wᵀ + bias) + residual, for the
// "nk", "kn" and "nk16" layouts (nk16 built with WeightLayout.h's
// nk16Index) and f32/bf16/f16 weights. K = 70 takes the scalar paths (and
// nk16's whole chunks as vectors), K = 264 the 128-bit vector paths with
// a K tail; N = 37 is neither a multiple of WARPS nor of the 16-row panel;
// m = 7 with MT = 4 leaves a partial row tile. Also: in-place residual,
// and batch invariance (a row computed alone is bitwise the same as inside
// a batch).
//
//===----------------------------------------------------------------------===//

#include "CudaEmuLlmTestUtil.h"

#include "ingot/WeightLayout.h"
#include "linear.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace ingot_k;
using namespace ingot_emu_test;

namespace {

// N = 19: a full 16-row panel and a partial one, and 19 % WARPS != 0.
constexpr int kN = 19, kWarps = 4, kMt = 4;

/// One linear problem: x [m, k], W [N, k] (stored in `layout`), bias [N]
/// of W's dtype and an f32 residual [m, N].
template <typename W> struct Problem {
  Problem(int k, int64_t m, WLayout layout, Rng rng)
      : k(k), m(m), x(rng.values(m * k)), residual(rng.values(m * kN)),
        w(rng.values(kN * k)), bias(rng.values(kN)), stored(kN * k) {
    for (int n = 0; n < kN; ++n)
      for (int c = 0; c < k; ++c) {
        const int64_t at = layout == WLayout::Nk ? int64_t(n) * k + c
                           : layout == WLayout::Kn
                               ? int64_t(c) * kN + n
                               : ingot::nk16Index(n, c, kN, k, sizeof(W));
        stored[at] = w.data[n * k + c];
      }
  }
  int k;
  int64_t m;
  std::vector<float> x, residual;
  Weights<W> w, bias;
  std::vector<W> stored;
};

/// Runs the template on rows [0, m) of `x`, with the launch geometry the
/// emitter uses.
template <int K, typename W, WLayout L, int ACT>
void runLinear(const Problem<W> &p, const float *x, int64_t m, bool useBias,
               const float *residual, float *y) {
  const unsigned gx = (kN + kWarps - 1) / kWarps,
                 gy = unsigned((m + kMt - 1) / kMt);
  const W *bias = useBias ? p.bias.data.data() : nullptr;
  ingot_emu::launch({gx, gy}, {kWarps * 32}, [&] {
    linear<K, kN, W, L, kWarps, kMt, ACT>(x, p.stored.data(), bias, residual, y,
                                          m);
  });
}

double refAct(int act, double v) {
  const double kPi = 3.14159265358979323846;
  switch (act) {
  case 1:
    return v < 0 ? 0 : v;
  case 2:
    return v / (1 + std::exp(-v));
  case 3:
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case 4:
    return 0.5 * v *
           (1 + std::tanh(std::sqrt(2 / kPi) * (v + 0.044715 * v * v * v)));
  default:
    return v;
  }
}

/// Worst |y - ref| / scale over all outputs, where scale is the sum of the
/// magnitudes of everything added (Σ|x·w| + |bias| + |residual|): the
/// natural unit of an f32 sum's rounding error, whatever the cancellation.
template <typename W>
double linearErr(const Problem<W> &p, int act, bool useBias, bool useRes,
                 const std::vector<float> &y) {
  double worst = 0;
  for (int64_t r = 0; r < p.m; ++r)
    for (int n = 0; n < kN; ++n) {
      double dot = 0, scale = 0;
      for (int c = 0; c < p.k; ++c) {
        const double t = double(p.x[r * p.k + c]) * p.w.ref[n * p.k + c];
        dot += t;
        scale += std::abs(t);
      }
      if (useBias)
        dot += p.bias.ref[n], scale += std::abs(p.bias.ref[n]);
      double ref = refAct(act, dot);
      if (useRes)
        ref += p.residual[r * kN + n],
            scale += std::abs(p.residual[r * kN + n]);
      const double e = std::abs(y[r * kN + n] - ref) / scale;
      if (!(e <= worst)) // NaN included
        worst = std::isnan(e) ? INFINITY : e;
    }
  return worst;
}

// Per lane ≤ 16 FMAs in a chain (K = 264, 16-bit: two 8-wide vectors),
// 5 butterfly adds, bias and residual adds: ≤ ~23·2^-24 ≈ 1.4e-6 of the
// scale, ×1.13 (the steepest activation slope) plus the activation's own
// few ulp. A dropped vector or lane costs ~1e-3.
constexpr double kLinearTol = 3e-6;

template <int K, typename W, WLayout L, int ACT>
void checkLinear(int64_t m, bool useBias, bool useRes, unsigned seed) {
  SCOPED_TRACE(::testing::Message()
               << "K=" << K << " layout=" << int(L) << " es=" << sizeof(W)
               << " act=" << ACT << " m=" << m << " bias=" << useBias
               << " res=" << useRes);
  const Problem<W> p(K, m, L, Rng(seed));
  std::vector<float> y(m * kN, 12345.0f); // an output not written shows
  runLinear<K, W, L, ACT>(p, p.x.data(), m, useBias,
                          useRes ? p.residual.data() : nullptr, y.data());
  EXPECT_LT(linearErr(p, ACT, useBias, useRes, y), kLinearTol);
}

/// Every weight dtype with K = 70 and 264: m = 7 with bias and residual,
/// and m = 1 (decode) with neither.
template <WLayout L> void checkLayout(unsigned seed) {
  checkLinear<70, float, L, 0>(7, true, true, seed);
  checkLinear<264, float, L, 0>(7, true, true, seed + 1);
  checkLinear<264, float, L, 0>(1, false, false, seed + 2);
  checkLinear<70, Bf16, L, 0>(7, true, true, seed + 3);
  checkLinear<264, Bf16, L, 0>(7, true, true, seed + 4);
  checkLinear<70, Bf16, L, 0>(1, false, false, seed + 5);
  checkLinear<70, F16, L, 0>(7, true, true, seed + 6);
  checkLinear<264, F16, L, 0>(7, true, true, seed + 7);
  checkLinear<264, F16, L, 0>(1, false, false, seed + 8);
}

TEST(CudaEmuLinear, LayoutNk) { checkLayout<WLayout::Nk>(100); }
TEST(CudaEmuLinear, LayoutKn) { checkLayout<WLayout::Kn>(200); }
TEST(CudaEmuLinear, LayoutNk16) { checkLayout<WLayout::Nk16>(300); }

TEST(CudaEmuLinear, Activations) {
  // relu, silu, gelu, gelu_tanh: with bias alone, then residual alone;
  // m = 3, one partial row tile (the layouts' tests cover two).
  checkLinear<70, Bf16, WLayout::Nk, 1>(3, true, false, 400);
  checkLinear<70, Bf16, WLayout::Nk, 2>(3, true, false, 401);
  checkLinear<70, Bf16, WLayout::Nk, 3>(3, true, false, 402);
  checkLinear<70, Bf16, WLayout::Nk, 4>(3, true, false, 403);
  checkLinear<264, float, WLayout::Nk16, 1>(3, false, true, 404);
  checkLinear<264, float, WLayout::Nk16, 2>(3, false, true, 405);
  checkLinear<264, F16, WLayout::Kn, 3>(3, false, true, 406);
  checkLinear<264, F16, WLayout::Kn, 4>(3, false, true, 407);
}

TEST(CudaEmuLinear, ResidualInPlace) {
  // The planner may put y over the residual: each output's residual is
  // read by the lane that then writes it.
  const Problem<F16> p(264, 7, WLayout::Nk, Rng(500));
  std::vector<float> y(7 * kN), yInPlace(p.residual);
  runLinear<264, F16, WLayout::Nk, 4>(p, p.x.data(), 7, true, p.residual.data(),
                                      y.data());
  runLinear<264, F16, WLayout::Nk, 4>(p, p.x.data(), 7, true, yInPlace.data(),
                                      yInPlace.data());
  EXPECT_EQ(0, std::memcmp(y.data(), yInPlace.data(), y.size() * 4));
  EXPECT_LT(linearErr(p, 4, true, true, y), kLinearTol);
}

/// Rows of an m = 7 batch (two row tiles, the second partial: rows 0 and
/// 3 start and end the first, 5 and 6 are inside the second) are bitwise
/// the row computed alone (m = 1).
template <int K, typename W, WLayout L>
void checkBatchInvariant(unsigned seed) {
  SCOPED_TRACE(::testing::Message() << "K=" << K << " layout=" << int(L));
  const Problem<W> p(K, 7, L, Rng(seed));
  std::vector<float> batch(7 * kN), alone(kN);
  runLinear<K, W, L, 3>(p, p.x.data(), 7, true, p.residual.data(),
                        batch.data());
  for (int r : {0, 3, 5, 6}) {
    runLinear<K, W, L, 3>(p, p.x.data() + r * K, 1, true,
                          p.residual.data() + r * kN, alone.data());
    EXPECT_EQ(0, std::memcmp(alone.data(), batch.data() + r * kN, kN * 4))
        << "row " << r;
  }
}

TEST(CudaEmuLinear, BatchInvariant) {
  checkBatchInvariant<264, float, WLayout::Nk>(600);
  checkBatchInvariant<70, Bf16, WLayout::Nk16>(601);
  checkBatchInvariant<264, F16, WLayout::Kn>(602);
}

} // namespace
