//===- CudaEmuQuantTest.cpp - The CUDA quantised templates on the CPU -----===//
//
// Runs quant.cuh (codegen/kernels/cuda) under the CPU emulation of
// CudaEmulation.h. Weights are fresh random f32 values quantised on the
// host by the repo's own ingot::quantizeRow; the references are built
// from ingot::dequantizeRow's values, so these tests check the kernels'
// decoding and dot products, not the quantiser.
//
// Shapes: GROUP 32 with K = 96 (whole blocks) and K = 80 (a short last
// block of 16: a short int4 run), GROUP 64 with K = 100 (a last block of
// 36: a whole run then a short run of 4); N = 19 is not a multiple of
// WARPS = 4; m = 7 with MT = 4 leaves a partial row tile, m = 1 is decode.
//
//===----------------------------------------------------------------------===//

#include "CudaEmuLlmTestUtil.h"

#include "ingot/Quant.h"
#include "quant.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace ingot_k;
using namespace ingot_emu_test;

namespace {

constexpr int kN = 19, kWarps = 4, kMt = 4;

ingot::DType dtypeOf(QFormat f) {
  return f == QFormat::Q8   ? ingot::DType::Q8
         : f == QFormat::Q4 ? ingot::DType::Q4
                            : ingot::DType::Q4M;
}

/// An [rows, k] matrix of random f32 values in ±[0.01, 1] (never zero),
/// quantised row by row, and the values its rows decode to.
struct QMatrix {
  QMatrix(QFormat f, int rows, int k, int group, unsigned seed)
      : rowBytes(ingot::quantRowBytes(dtypeOf(f), k, group)),
        bytes(size_t(rows * rowBytes)), ref(size_t(rows) * k) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> mag(0.01f, 1.0f);
    std::bernoulli_distribution neg(0.5);
    std::vector<float> src(static_cast<size_t>(k)), dq(src.size());
    const ingot::QuantOptions o{dtypeOf(f), group};
    for (int r = 0; r < rows; ++r) {
      for (float &v : src)
        v = neg(gen) ? -mag(gen) : mag(gen);
      uint8_t *row = bytes.data() + r * rowBytes;
      ingot::quantizeRow(o, src.data(), k, row);
      ingot::dequantizeRow(dtypeOf(f), group, row, k, dq.data());
      std::copy(dq.begin(), dq.end(), ref.begin() + size_t(r) * k);
    }
  }
  int64_t rowBytes;
  std::vector<uint8_t> bytes;
  std::vector<float> ref; // dequantizeRow's values, [rows, k]
};

/// One problem: x [m, K], W [N, K] quantised, f32 and bf16 biases [N] and
/// an f32 residual [m, N].
struct Problem {
  Problem(QFormat f, int k, int group, int64_t m, unsigned seed)
      : k(k), m(m), w(f, kN, k, group, seed), x(Rng(seed + 1).values(m * k)),
        residual(Rng(seed + 2).values(m * kN)),
        biasF32(Rng(seed + 3).values(kN)), biasBf16(Rng(seed + 4).values(kN)) {}
  int k;
  int64_t m;
  QMatrix w;
  std::vector<float> x, residual;
  Weights<float> biasF32;
  Weights<Bf16> biasBf16;
};

enum class BiasKind { None, F32, Bf16 };

/// Runs the template with the launch geometry of quant.cuh's header.
template <int K, QFormat F, int GROUP, int ACT>
void runLinearQ(const Problem &p, const float *x, int64_t m, BiasKind bias,
                const float *residual, float *y) {
  const unsigned gx = (kN + kWarps - 1) / kWarps,
                 gy = unsigned((m + kMt - 1) / kMt);
  const uint8_t *w = p.w.bytes.data();
  ingot_emu::launch({gx, gy}, {kWarps * 32}, [&] {
    if (bias == BiasKind::Bf16)
      linearQuant<K, kN, F, GROUP, kWarps, kMt, ACT, Bf16>(
          x, w, p.biasBf16.data.data(), residual, y, m);
    else
      linearQuant<K, kN, F, GROUP, kWarps, kMt, ACT>(
          x, w, bias == BiasKind::F32 ? p.biasF32.data.data() : nullptr,
          residual, y, m);
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

/// Worst |y - ref| / scale, scale = Σ|x·w| + |bias| + |residual| (the unit
/// of an f32 sum's rounding error whatever the cancellation); ref is
/// float64 over the dequantised weights.
double linearErr(const Problem &p, int act, BiasKind bias, bool useRes,
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
      if (bias != BiasKind::None) {
        const double b =
            bias == BiasKind::F32 ? p.biasF32.ref[n] : p.biasBf16.ref[n];
        dot += b, scale += std::abs(b);
      }
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

// Per lane ≤ 4 FMAs in a chain (K = 100, GROUP 64: 2 + 2), 5 butterfly
// adds, bias and residual adds: ≤ ~11·2^-24 ≈ 6.6e-7 of the scale, ×1.13
// (the steepest activation slope) plus the activation's few ulp. A wrong
// nibble, scale or dropped term costs > 1e-3.
constexpr double kTol = 3e-6;

template <int K, QFormat F, int GROUP, int ACT>
void checkLinearQ(int64_t m, BiasKind bias, bool useRes, unsigned seed) {
  SCOPED_TRACE(::testing::Message()
               << "K=" << K << " format=" << int(F) << " group=" << GROUP
               << " act=" << ACT << " m=" << m << " bias=" << int(bias)
               << " res=" << useRes);
  const Problem p(F, K, GROUP, m, seed);
  std::vector<float> y(m * kN, 12345.0f); // an output not written shows
  runLinearQ<K, F, GROUP, ACT>(p, p.x.data(), m, bias,
                               useRes ? p.residual.data() : nullptr, y.data());
  EXPECT_LT(linearErr(p, ACT, bias, useRes, y), kTol);
}

/// The three shapes: m = 7 with an f32 bias and residual, m = 1 with
/// neither.
template <QFormat F> void checkFormat(unsigned seed) {
  checkLinearQ<96, F, 32, 0>(7, BiasKind::F32, true, seed);
  checkLinearQ<80, F, 32, 0>(7, BiasKind::F32, true, seed + 1);
  checkLinearQ<100, F, 64, 0>(7, BiasKind::F32, true, seed + 2);
  checkLinearQ<96, F, 32, 0>(1, BiasKind::None, false, seed + 3);
  checkLinearQ<80, F, 32, 0>(1, BiasKind::None, false, seed + 4);
  checkLinearQ<100, F, 64, 0>(1, BiasKind::None, false, seed + 5);
}

TEST(CudaEmuQuant, LinearQ8) { checkFormat<QFormat::Q8>(100); }
TEST(CudaEmuQuant, LinearQ4) { checkFormat<QFormat::Q4>(200); }
TEST(CudaEmuQuant, LinearQ4M) { checkFormat<QFormat::Q4M>(300); }

TEST(CudaEmuQuant, BiasBf16AndActivations) {
  // A bf16 bias (linear's bias is any float dtype) with silu, gelu,
  // gelu_tanh and relu, with and without the residual.
  checkLinearQ<100, QFormat::Q4, 64, 2>(7, BiasKind::Bf16, true, 400);
  checkLinearQ<80, QFormat::Q4M, 32, 3>(7, BiasKind::Bf16, false, 401);
  checkLinearQ<96, QFormat::Q8, 32, 4>(7, BiasKind::Bf16, true, 402);
  checkLinearQ<100, QFormat::Q8, 64, 1>(1, BiasKind::F32, false, 403);
}

TEST(CudaEmuQuant, ResidualInPlace) {
  // The planner may put y over the residual.
  const Problem p(QFormat::Q4M, 100, 64, 7, 500);
  std::vector<float> y(7 * kN), yInPlace(p.residual);
  runLinearQ<100, QFormat::Q4M, 64, 2>(p, p.x.data(), 7, BiasKind::F32,
                                       p.residual.data(), y.data());
  runLinearQ<100, QFormat::Q4M, 64, 2>(p, p.x.data(), 7, BiasKind::F32,
                                       yInPlace.data(), yInPlace.data());
  EXPECT_EQ(0, std::memcmp(y.data(), yInPlace.data(), y.size() * 4));
}

/// Rows of an m = 7 batch (rows 0 and 3 start and end the first tile, 5
/// and 6 are inside the partial second) are bitwise the row computed
/// alone (m = 1).
template <int K, QFormat F, int GROUP> void checkBatchInvariant(unsigned seed) {
  SCOPED_TRACE(::testing::Message()
               << "K=" << K << " format=" << int(F) << " group=" << GROUP);
  const Problem p(F, K, GROUP, 7, seed);
  std::vector<float> batch(7 * kN), alone(kN);
  runLinearQ<K, F, GROUP, 3>(p, p.x.data(), 7, BiasKind::Bf16,
                             p.residual.data(), batch.data());
  for (int r : {0, 3, 5, 6}) {
    runLinearQ<K, F, GROUP, 3>(p, p.x.data() + r * K, 1, BiasKind::Bf16,
                               p.residual.data() + r * kN, alone.data());
    EXPECT_EQ(0, std::memcmp(alone.data(), batch.data() + r * kN, kN * 4))
        << "row " << r;
  }
}

TEST(CudaEmuQuant, BatchInvariant) {
  checkBatchInvariant<96, QFormat::Q8, 32>(600);
  checkBatchInvariant<80, QFormat::Q4, 32>(601);
  checkBatchInvariant<100, QFormat::Q4M, 64>(602);
}

/// quantValue, called directly, is bitwise dequantizeRow for every value,
/// including odd short runs (K = 77 with GROUP 64: a last block of 13).
template <QFormat F, int GROUP> void checkDecode(int k, unsigned seed) {
  const QMatrix q(F, 3, k, GROUP, seed);
  const int64_t block = ingot::quantBlockBytes(dtypeOf(F), GROUP);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < k; ++c) {
      const int b = c / GROUP, g = std::min(GROUP, k - b * GROUP);
      const float v = quantValue<F>(q.bytes.data() + r * q.rowBytes + b * block,
                                    c - b * GROUP, g);
      ASSERT_EQ(bitsOf(v), bitsOf(q.ref[size_t(r) * k + c]))
          << "format " << int(F) << " k " << k << " row " << r << " col " << c;
    }
}

TEST(CudaEmuQuant, DecodeMatchesDequantizeRow) {
  checkDecode<QFormat::Q8, 32>(80, 700);
  checkDecode<QFormat::Q4, 32>(80, 701);
  checkDecode<QFormat::Q4M, 32>(80, 702);
  checkDecode<QFormat::Q8, 64>(77, 703);
  checkDecode<QFormat::Q4, 64>(77, 704);
  checkDecode<QFormat::Q4M, 64>(77, 705);
}

/// Rows of a [kVocab, D] table picked by ids (a negative id counts from
/// the end; out-of-range ids give NaN rows) are bitwise dequantizeRow's.
template <int D, QFormat F, int GROUP, typename Index>
void checkEmbedding(unsigned seed) {
  SCOPED_TRACE(::testing::Message() << "D=" << D << " format=" << int(F)
                                    << " index bytes=" << sizeof(Index));
  constexpr int kVocab = 11;
  const QMatrix table(F, kVocab, D, GROUP, seed);
  const std::vector<Index> ids = {3, -1, 0, kVocab, Index(-kVocab - 1), 10};
  std::vector<float> y(ids.size() * D, 12345.0f);
  ingot_emu::launch({unsigned(ids.size())}, {64}, [&] {
    embeddingRowsQuant<D, 64, F, GROUP, Index>(table.bytes.data(), ids.data(),
                                               y.data(), kVocab);
  });
  for (size_t t = 0; t < ids.size(); ++t) {
    const int64_t id = ids[t] < 0 ? int64_t(ids[t]) + kVocab : ids[t];
    for (int c = 0; c < D; ++c) {
      const float got = y[t * D + c];
      if (id < 0 || id >= kVocab)
        ASSERT_TRUE(std::isnan(got)) << "id " << ids[t] << " col " << c;
      else
        ASSERT_EQ(bitsOf(got), bitsOf(table.ref[size_t(id) * D + c]))
            << "id " << ids[t] << " col " << c;
    }
  }
}

TEST(CudaEmuQuant, EmbeddingRows) {
  checkEmbedding<96, QFormat::Q8, 32, int32_t>(800);
  checkEmbedding<80, QFormat::Q4, 32, int64_t>(801);
  checkEmbedding<100, QFormat::Q4M, 64, int32_t>(802);
  checkEmbedding<100, QFormat::Q4, 64, int64_t>(803);
  checkEmbedding<80, QFormat::Q8, 32, int64_t>(804);
  checkEmbedding<96, QFormat::Q4M, 32, int64_t>(805);
}

} // namespace
