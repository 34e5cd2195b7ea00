//===- CudaEmuLlmKernelsTest.cpp - CUDA LLM kernel templates on the CPU ---===//
//
// Runs the CUDA kernel templates norm.cuh, activation.cuh and gather.cuh
// (codegen/kernels/cuda) under the CPU emulation of CudaEmulation.h and
// compares them with float64 references written here from the CPU
// kernels' documented math (runtime/src/cpu/LlmNorm.cpp, LlmActivation.cpp,
// DataMovement.cpp). linear.cuh has CudaEmuLinearTest.cpp.
//
// Inputs are random in ±[0.05, 2] (never zero) from a fixed seed; 16-bit
// weights are rounded from f32 here, and the references use the rounded
// values, so any difference is the kernel's own arithmetic.
//
//===----------------------------------------------------------------------===//

#include "CudaEmuLlmTestUtil.h"

#include "activation.cuh"
#include "convert.cuh"
#include "gather.cuh"
#include "norm.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace ingot_k;
using namespace ingot_emu_test;

namespace {

// --- rms_norm / add_rms_norm -------------------------------------------------

constexpr int kH = 200, kNormBlock = 64, kRows = 3; // H % BLOCK != 0
constexpr float kEps = 1e-5f;

/// rms_norm of one row in double: s / sqrt(mean(s²) + eps) · w.
void refRmsRow(const float *s, const std::vector<double> &w, double *out) {
  double sq = 0;
  for (int i = 0; i < kH; ++i)
    sq += double(s[i]) * s[i];
  const double inv = 1.0 / std::sqrt(sq / kH + double(kEps));
  for (int i = 0; i < kH; ++i)
    out[i] = s[i] * inv * w[i];
}

/// Where the outputs go: their own memory, or over the inputs as the
/// memory planner may put them (add form: sum over a, y over b, or both;
/// rms_norm: y over x).
enum class Alias { None, SumOverA, YOverB, Both };

/// Runs rmsNorm<kH, kNormBlock, W> (add form when `add`) and checks y, and
/// sum for the add form, against the reference.
template <typename W> void checkRmsNorm(bool add, Alias alias, unsigned seed) {
  Rng rng(seed);
  std::vector<float> a = rng.values(kRows * kH), b = rng.values(kRows * kH);
  const Weights<W> w(rng.values(kH));
  // The add form's s is a + b rounded to f32, as the CPU stores it.
  std::vector<float> s(a);
  if (add)
    for (size_t i = 0; i < s.size(); ++i)
      s[i] = a[i] + b[i];
  std::vector<double> ref(kRows * kH);
  for (int r = 0; r < kRows; ++r)
    refRmsRow(s.data() + r * kH, w.ref, ref.data() + r * kH);

  std::vector<float> sumOut(kRows * kH), yOut(kRows * kH);
  const bool sumOverA = alias == Alias::SumOverA || alias == Alias::Both;
  const bool yOverB = alias == Alias::YOverB || alias == Alias::Both;
  float *sum = sumOverA ? a.data() : sumOut.data();
  float *y = yOverB ? b.data() : yOut.data();
  const float *bp = add ? b.data() : nullptr;
  if (!add && alias == Alias::YOverB)
    y = a.data(); // rms_norm in place: y over x
  ingot_emu::launch({kRows}, {kNormBlock}, [&] {
    rmsNorm<kH, kNormBlock, W>(a.data(), bp, w.data.data(), sum, y, kEps);
  });
  // The f32 sum of squares: ≤ 4 terms a thread, 5 butterfly and 2 block
  // adds, ~11 roundings of a positive sum (≤ 7e-7), halved by the rsqrt;
  // then the rsqrt's and three products' roundings: ~1.5e-6 at worst.
  EXPECT_LT(maxRelErr(y, ref, 1e-6), 4e-6);
  if (!add)
    return;
  for (size_t i = 0; i < s.size(); ++i)
    ASSERT_EQ(sum[i], s[i]) << "sum at " << i; // exactly f32 a + b
}

TEST(CudaEmuNorm, RmsNormF32) { checkRmsNorm<float>(false, Alias::None, 1); }
TEST(CudaEmuNorm, RmsNormBf16) { checkRmsNorm<Bf16>(false, Alias::None, 2); }
TEST(CudaEmuNorm, RmsNormF16) { checkRmsNorm<F16>(false, Alias::None, 3); }
TEST(CudaEmuNorm, RmsNormInPlace) {
  checkRmsNorm<Bf16>(false, Alias::YOverB, 4);
}
TEST(CudaEmuNorm, AddRmsNormF32) { checkRmsNorm<float>(true, Alias::None, 5); }
TEST(CudaEmuNorm, AddRmsNormBf16) { checkRmsNorm<Bf16>(true, Alias::None, 6); }
TEST(CudaEmuNorm, AddRmsNormF16) { checkRmsNorm<F16>(true, Alias::None, 7); }
TEST(CudaEmuNorm, AddRmsNormSumOverA) {
  checkRmsNorm<F16>(true, Alias::SumOverA, 8);
}
TEST(CudaEmuNorm, AddRmsNormYOverB) {
  checkRmsNorm<float>(true, Alias::YOverB, 9);
}
TEST(CudaEmuNorm, AddRmsNormBothInPlace) {
  checkRmsNorm<Bf16>(true, Alias::Both, 10);
}

// --- silu_mul / gelu ---------------------------------------------------------

constexpr int kActBlock = 256;

double refSilu(double g) { return g / (1.0 + std::exp(-g)); }

/// Runs `body` as one thread per element of n (block 256, as the emitter).
template <typename Fn> void launchElementwise(int64_t n, Fn &&body) {
  const unsigned blocks = unsigned((n + kActBlock - 1) / kActBlock);
  ingot_emu::launch({blocks}, {kActBlock}, body);
}

constexpr int kSiluRows = 3, kSiluI = 100; // 300 outputs: 2 blocks, a tail

TEST(CudaEmuActivation, SiluMulTwoInputs) {
  Rng rng(11);
  const int64_t n = kSiluRows * kSiluI;
  std::vector<float> g = rng.values(n), u = rng.values(n), y(n);
  std::vector<double> ref(n);
  for (int64_t i = 0; i < n; ++i)
    ref[i] = refSilu(g[i]) * u[i];
  launchElementwise(n,
                    [&] { siluMul<kSiluI>(g.data(), u.data(), y.data(), n); });
  // expf within 2 ulp, then 4 roundings; |g| ≥ 0.05 keeps y away from 0.
  EXPECT_LT(maxRelErr(y.data(), ref, 1e-6), 2e-6);
  // In place over gate: each thread reads its element before writing it.
  launchElementwise(n,
                    [&] { siluMul<kSiluI>(g.data(), u.data(), g.data(), n); });
  EXPECT_EQ(g, y);
}

TEST(CudaEmuActivation, SiluMulPackedGateThenUp) {
  Rng rng(12);
  const int64_t n = kSiluRows * kSiluI;
  std::vector<float> x = rng.values(2 * n), y(n);
  std::vector<double> ref(n);
  for (int64_t r = 0; r < kSiluRows; ++r)
    for (int64_t c = 0; c < kSiluI; ++c) {
      const float *row = x.data() + r * 2 * kSiluI;
      ref[r * kSiluI + c] = refSilu(row[c]) * row[kSiluI + c];
    }
  launchElementwise(n,
                    [&] { siluMul<kSiluI>(x.data(), nullptr, y.data(), n); });
  EXPECT_LT(maxRelErr(y.data(), ref, 1e-6), 2e-6); // as the two-input form
}

TEST(CudaEmuActivation, SiluMulPackedOverItsInput) {
  // The memory plan may put y at the packed input's own address: the
  // serial form must give what the parallel one gives into fresh memory.
  Rng rng(15);
  const int64_t n = kSiluRows * kSiluI;
  std::vector<float> x = rng.values(2 * n), fresh(n);
  launchElementwise(
      n, [&] { siluMul<kSiluI>(x.data(), nullptr, fresh.data(), n); });
  ingot_emu::launch({1, 1, 1}, {64, 1, 1}, [&] {
    siluMulPackedInPlace<kSiluI, 64>(x.data(), x.data(), kSiluRows);
  });
  EXPECT_EQ(std::vector<float>(x.begin(), x.begin() + n), fresh);
}

template <bool TANH> void checkGelu(unsigned seed) {
  Rng rng(seed);
  const int64_t n = 300;
  std::vector<float> x = rng.values(n), y(n);
  std::vector<double> ref(n);
  const double kPi = 3.14159265358979323846;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    ref[i] = TANH ? 0.5 * v *
                        (1 + std::tanh(std::sqrt(2 / kPi) *
                                       (v + 0.044715 * v * v * v)))
                  : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  }
  launchElementwise(n, [&] { gelu<TANH>(x.data(), y.data(), n); });
  // erfcf / expf within a few ulp; the tanh form's sigmoid argument (≤ 4)
  // amplifies its 3 roundings at most 4x: ~1e-6 at worst.
  EXPECT_LT(maxRelErr(y.data(), ref, 1e-6), 3e-6);
  launchElementwise(n, [&] { gelu<TANH>(x.data(), x.data(), n); });
  EXPECT_EQ(x, y); // in place
}

TEST(CudaEmuActivation, GeluErf) { checkGelu<false>(13); }
TEST(CudaEmuActivation, GeluTanh) { checkGelu<true>(14); }

// --- gather (embedding rows) -------------------------------------------------

constexpr int kVocab = 11, kD = 72, kGatherBlock = 32; // D % BLOCK != 0

template <typename W, typename Index> void checkEmbedding(unsigned seed) {
  Rng rng(seed);
  const Weights<W> table(rng.values(kVocab * kD));
  // In range, the first and last rows, negative (from the end), and just
  // out of range on either side.
  std::vector<Index> ids = {3,       0, kVocab - 1, -1,
                            -kVocab, 7, kVocab,     -kVocab - 1};
  if constexpr (sizeof(Index) == 8) // out of range, row 3 if cut to 32 bits
    ids.push_back((int64_t(1) << 32) + 3);
  const int count = int(ids.size());
  std::vector<float> y(count * kD, 0.0f);
  ingot_emu::launch({unsigned(count)}, {kGatherBlock}, [&] {
    embeddingRows<kD, kGatherBlock, W, Index>(table.data.data(), ids.data(),
                                              y.data(), kVocab);
  });
  for (int t = 0; t < count; ++t) {
    int64_t id = ids[t];
    const bool valid = id >= -kVocab && id < kVocab;
    id = id < 0 ? id + kVocab : id;
    for (int c = 0; c < kD; ++c) {
      const float got = y[t * kD + c];
      if (valid) { // widening is exact
        ASSERT_EQ(double(got), table.ref[id * kD + c]) << t << "," << c;
      } else {
        ASSERT_TRUE(std::isnan(got)) << "id " << ids[t] << " col " << c;
      }
    }
  }
}

TEST(CudaEmuGather, EmbeddingF32I64) { checkEmbedding<float, i64>(21); }
TEST(CudaEmuGather, EmbeddingBf16I32) { checkEmbedding<Bf16, i32>(22); }
TEST(CudaEmuGather, EmbeddingF16I64) { checkEmbedding<F16, i64>(23); }
TEST(CudaEmuGather, EmbeddingF16I32) { checkEmbedding<F16, i32>(24); }

// A 16-bit table's rows kept as they are, then cast to f32: the CPU's
// gather + cast pair for f16/bf16 checkpoints. Both are exact.
template <typename W> void checkGatherThenCast(unsigned seed, u16 nanBits) {
  Rng rng(seed);
  const Weights<W> table(rng.values(kVocab * kD));
  const std::vector<i64> ids = {4, -2, kVocab, 0};
  const int count = int(ids.size());
  std::vector<u16> rows(count * kD, 0);
  std::vector<float> y(count * kD, 0.0f);
  const u16 *bits = reinterpret_cast<const u16 *>(table.data.data());
  ingot_emu::launch({unsigned(count)}, {kGatherBlock}, [&] {
    gatherRows16<kD, kGatherBlock, i64>(bits, ids.data(), rows.data(), kVocab,
                                        nanBits);
  });
  const i64 n = count * kD;
  ingot_emu::launch({unsigned((n + 255) / 256)}, {256}, [&] {
    castToF32<W>(reinterpret_cast<const W *>(rows.data()), y.data(), n);
  });
  for (int t = 0; t < count; ++t)
    for (int c = 0; c < kD; ++c) {
      if (ids[t] >= kVocab) { // out of range: the format's quiet NaN
        ASSERT_EQ(rows[t * kD + c], nanBits);
        ASSERT_TRUE(std::isnan(y[t * kD + c]));
        continue;
      }
      const i64 id = ids[t] < 0 ? ids[t] + kVocab : ids[t];
      ASSERT_EQ(rows[t * kD + c], bits[id * kD + c]) << t << "," << c;
      ASSERT_EQ(double(y[t * kD + c]), table.ref[id * kD + c]);
    }
}

TEST(CudaEmuGather, F16RowsThenCast) { checkGatherThenCast<F16>(25, 0x7e00); }
TEST(CudaEmuGather, Bf16RowsThenCast) { checkGatherThenCast<Bf16>(26, 0x7fc0); }

} // namespace
