//===- BatchInvarianceTest.cpp - A row's output ignores its batch ---------===//
//
// The serving engine batches many sequences into one step, and a request's
// greedy tokens must not depend on what it was batched with. So every
// kernel of the decoder-LLM step must give each row (token) the same bits
// alone (M = 1) as inside batches of 2..200 rows at any position, and for
// any thread count. Each check runs probe rows alone on one thread, then
// inside batches of random other rows on pools of 1, 2 and 3 threads, and
// compares the probe rows' output bytes exactly.
//
// The fused kernels (add_rms_norm, add_layer_norm: both outputs; silu_mul's
// one-input form) are checked the same way. paged_attention and
// rope_paged_attention are in BatchInvarianceAttentionTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "BatchInvarianceUtil.h"

#include "ingot/WeightLayout.h"

#include <functional>

using namespace ingot;
using namespace ingot::test;

namespace {

const int64_t kBatchSizes[] = {2, 7, 33, 64, 200};
constexpr int64_t kProbes = 3;       // rows 0..2 of every row source
constexpr int64_t kSourceRows = 260; // probes plus fillers for 200 rows

/// A row-wise kernel: `sources` are its per-row inputs ([kSourceRows, ...]
/// each); `inputs` turns the picked rows into the call's inputs (adding
/// weights and other fixed operands).
struct RowKernel {
  std::string kernel;
  std::vector<Tensor> sources;
  std::function<std::vector<const Tensor *>(const std::vector<Tensor> &)>
      inputs;
  std::vector<Attr> attrs;
  DType outType = DType::F32;
  size_t numOutputs = 1; // each is checked
  std::vector<std::string> layouts; // per input, as Call::layouts
};

std::vector<Tensor> runRows(const RowKernel &rk,
                            const std::vector<int64_t> &ids, int threads) {
  std::vector<Tensor> picked;
  for (const Tensor &s : rk.sources)
    picked.push_back(pickRows(s, ids));
  Call c(rk.kernel, rk.inputs(picked), rk.attrs,
         std::vector<DType>(rk.numOutputs, rk.outType));
  c.pool = &invariancePool(threads);
  c.layouts = rk.layouts;
  std::vector<Tensor> outs;
  Status s = runKernel(c, &outs);
  EXPECT_TRUE(s.isOk()) << rk.kernel << ": " << s.message();
  outs.resize(rk.numOutputs);
  return outs;
}

/// Row `i` of `out` as bytes (rows along dim 0).
std::vector<uint8_t> rowBytes(const Tensor &out, int64_t i) {
  if (out.shape.empty() || out.shape[0] <= i)
    return {};
  const size_t n = out.data.size() / size_t(out.shape[0]);
  return {out.data.begin() + i * n, out.data.begin() + (i + 1) * n};
}

void expectRowInvariant(const RowKernel &rk, uint64_t seed) {
  std::vector<std::vector<Tensor>> alone; // [probe][output], one row each
  for (int64_t p = 0; p < kProbes; ++p)
    alone.push_back(runRows(rk, {p}, 1));
  Rng rng(seed);
  for (int64_t m : kBatchSizes) {
    // Random fillers, then the probes at the front, middle and back.
    std::vector<int64_t> ids(m);
    for (int64_t &id : ids)
      id = kProbes + int64_t(rng.gen() % uint64_t(kSourceRows - kProbes));
    const int64_t at[kProbes] = {0, m / 2, m - 1};
    for (int64_t p = 0; p < kProbes; ++p)
      ids[at[p]] = p;
    for (int threads : {1, 2, 3}) {
      const std::vector<Tensor> outs = runRows(rk, ids, threads);
      for (size_t o = 0; o < rk.numOutputs; ++o)
        for (int64_t i = 0; i < m; ++i) {
          if (ids[i] >= kProbes)
            continue;
          EXPECT_TRUE(rowBytes(outs[o], i) == rowBytes(alone[ids[i]][o], 0))
              << rk.kernel << " output " << o << ": probe " << ids[i]
              << " at row " << i << " of " << m << " on " << threads
              << " threads";
        }
    }
  }
}

TEST(BatchInvariance, Linear) {
  Rng rng(901);
  // Odd K and N (vector tails, partial blocks), SmolLM2's K = 576, and an
  // N below one 64-column chunk ("kn" then splits the rows over threads).
  const std::pair<int64_t, int64_t> sizes[] = {
      {515, 133}, {200, 576}, {40, 77}};
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    for (bool nk : {true, false})
      for (auto [n, k] : sizes) {
        SCOPED_TRACE(std::string(dtypeName(dt)) + (nk ? " nk" : " kn") +
                     " n=" + std::to_string(n) + " k=" + std::to_string(k));
        auto w = std::make_shared<Weight>(
            makeWeight(rng, dt, nk ? Shape{n, k} : Shape{k, n}));
        auto b = std::make_shared<Weight>(makeWeight(rng, dt, {n}));
        RowKernel rk{"linear",
                     {rng.uniform({kSourceRows, k})},
                     nullptr,
                     {strAttr("w_layout", nk ? "nk" : "kn")}};
        rk.inputs = [w, b](const std::vector<Tensor> &r) {
          return std::vector<const Tensor *>{&r[0], &w->t, &b->t};
        };
        expectRowInvariant(rk, 11);
      }
}

TEST(BatchInvariance, LinearPackedWithEpilogue) {
  // "nk16" weights and the fused epilogue (activation + residual, both
  // row-wise sources) keep every row's bits.
  Rng rng(903);
  for (DType dt : {DType::F32, DType::BF16})
    for (const char *act : {"silu", "gelu_tanh"}) {
      const int64_t n = 133, k = 77;
      SCOPED_TRACE(std::string(dtypeName(dt)) + " nk16 " + act);
      auto w = std::make_shared<Weight>(makeWeight(rng, dt, {n, k}));
      Tensor packed = w->t;
      ASSERT_TRUE(packWeight("nk16", w->t.data.data(), n, k, dtypeSize(dt),
                             packed.data.data())
                      .isOk());
      w->t = std::move(packed);
      auto b = std::make_shared<Weight>(makeWeight(rng, dt, {n}));
      RowKernel rk{
          "linear",
          {rng.uniform({kSourceRows, k}), rng.uniform({kSourceRows, n})},
          [w, b](const std::vector<Tensor> &r) {
            return std::vector<const Tensor *>{&r[0], &w->t, &b->t, &r[1]};
          },
          {strAttr("w_layout", "nk16"), strAttr("activation", act)}};
      rk.layouts = {"", "nk16"};
      expectRowInvariant(rk, 12);
    }
}

TEST(BatchInvariance, NormActivationsAndAdd) {
  Rng rng(902);
  auto w = std::make_shared<Weight>(makeWeight(rng, DType::BF16, {579}));
  RowKernel norm{"rms_norm",
                 {rng.uniform({kSourceRows, 579}, -3, 3)},
                 [w](const std::vector<Tensor> &r) {
                   return std::vector<const Tensor *>{&r[0], &w->t};
                 },
                 {floatAttr("epsilon", 1e-5)}};
  expectRowInvariant(norm, 12);
  // Rows of 1029 so that the kernels' 1024-element blocks straddle rows.
  auto both = [](const std::vector<Tensor> &r) {
    return std::vector<const Tensor *>{&r[0], &r[1]};
  };
  RowKernel silu{"silu_mul",
                 {rng.uniform({kSourceRows, 1029}, -12, 12),
                  rng.uniform({kSourceRows, 1029})},
                 both,
                 {}};
  expectRowInvariant(silu, 13);
  for (const char *form : {"none", "tanh"}) {
    RowKernel gelu{"gelu",
                   {rng.uniform({kSourceRows, 1029}, -6, 6)},
                   [](const std::vector<Tensor> &r) {
                     return std::vector<const Tensor *>{&r[0]};
                   },
                   {strAttr("approximate", form)}};
    expectRowInvariant(gelu, 14);
  }
  RowKernel add{
      "add",
      {rng.uniform({kSourceRows, 579}), rng.uniform({kSourceRows, 579})},
      both,
      {}};
  expectRowInvariant(add, 15);
}

TEST(BatchInvariance, RopeAndEmbedding) {
  Rng rng(903);
  RowKernel rope{"rope",
                 {rng.uniform({kSourceRows, 3 * 64}),
                  rng.ints<int64_t>(DType::I64, {kSourceRows}, 0, 8191)},
                 [](const std::vector<Tensor> &r) {
                   return std::vector<const Tensor *>{&r[0], &r[1]};
                 },
                 {intAttr("num_heads", 3), intAttr("head_dim", 64),
                  intAttr("rotary_dim", 64), floatAttr("theta", 100000.0),
                  strAttr("scaling", "none")}};
  expectRowInvariant(rope, 16);
  // The embedding: gather of bf16 table rows, then the cast to f32.
  auto table =
      std::make_shared<Weight>(makeWeight(rng, DType::BF16, {1000, 579}));
  RowKernel gather{"gather",
                   {rng.ints<int64_t>(DType::I64, {kSourceRows}, 0, 999)},
                   [table](const std::vector<Tensor> &r) {
                     return std::vector<const Tensor *>{&table->t, &r[0]};
                   },
                   {intAttr("axis", 0)},
                   DType::BF16};
  expectRowInvariant(gather, 17);
  std::vector<int64_t> rows(kSourceRows);
  for (int64_t j = 0; j < kSourceRows; ++j)
    rows[j] = (j * 37) % 1000;
  RowKernel cast{"cast",
                 {pickRows(table->t, rows)},
                 [](const std::vector<Tensor> &r) {
                   return std::vector<const Tensor *>{&r[0]};
                 },
                 {}};
  expectRowInvariant(cast, 18);
}

TEST(BatchInvariance, FusedNormsAndPackedSiluMul) {
  Rng rng(906);
  auto w = std::make_shared<Weight>(makeWeight(rng, DType::BF16, {579}));
  RowKernel addRms{
      "add_rms_norm",
      {rng.uniform({kSourceRows, 579}, -3, 3), rng.uniform({kSourceRows, 579})},
      [w](const std::vector<Tensor> &r) {
        return std::vector<const Tensor *>{&r[0], &r[1], &w->t};
      },
      {floatAttr("epsilon", 1e-5)}};
  addRms.numOutputs = 2;
  expectRowInvariant(addRms, 19);
  auto scale = std::make_shared<Tensor>(rng.uniform({579}, 0.5, 1.5));
  auto bias = std::make_shared<Tensor>(rng.uniform({579}));
  RowKernel addLn{
      "add_layer_norm",
      {rng.uniform({kSourceRows, 579}, 1, 4), rng.uniform({kSourceRows, 579})},
      [scale, bias](const std::vector<Tensor> &r) {
        return std::vector<const Tensor *>{&r[0], &r[1], scale.get(),
                                           bias.get()};
      },
      {floatAttr("epsilon", 1e-5)}};
  addLn.numOutputs = 2;
  expectRowInvariant(addLn, 20);
  // F = 1029: rows of two 1024-element blocks and a tail.
  RowKernel packed{"silu_mul",
                   {rng.uniform({kSourceRows, 2 * 1029}, -12, 12)},
                   [](const std::vector<Tensor> &r) {
                     return std::vector<const Tensor *>{&r[0]};
                   },
                   {}};
  expectRowInvariant(packed, 21);
}

} // namespace
