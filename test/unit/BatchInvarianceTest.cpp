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
// paged_attention: the same token alone, next to 63 decoding sequences, and
// next to prefill chunks of other sequences, with windows long enough to be
// cut into several chunks (whose merge is also checked against dense
// attention in double).
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include <functional>

using namespace ingot;
using namespace ingot::test;

namespace {

const int64_t kBatchSizes[] = {2, 7, 33, 64, 200};
constexpr int64_t kProbes = 3;       // rows 0..2 of every row source
constexpr int64_t kSourceRows = 260; // probes plus fillers for 200 rows

ThreadPool &pool(int threads) {
  static ThreadPool p1(1), p2(2), p3(3);
  return threads == 1 ? p1 : threads == 2 ? p2 : p3;
}

/// Rows `ids` of `t` (any dtype, rows along dim 0).
Tensor pickRows(const Tensor &t, const std::vector<int64_t> &ids) {
  const size_t rowBytes = t.data.size() / size_t(t.shape[0]);
  Tensor r;
  r.dtype = t.dtype;
  r.shape = t.shape;
  r.shape[0] = int64_t(ids.size());
  r.data.resize(ids.size() * rowBytes);
  for (size_t i = 0; i < ids.size(); ++i)
    std::memcpy(r.data.data() + i * rowBytes, t.data.data() + ids[i] * rowBytes,
                rowBytes);
  return r;
}

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
};

Tensor runRows(const RowKernel &rk, const std::vector<int64_t> &ids,
               int threads) {
  std::vector<Tensor> picked;
  for (const Tensor &s : rk.sources)
    picked.push_back(pickRows(s, ids));
  Call c(rk.kernel, rk.inputs(picked), rk.attrs, {rk.outType});
  c.pool = &pool(threads);
  return runOk(c);
}

/// Row `i` of `out` as bytes (rows along dim 0).
std::vector<uint8_t> rowBytes(const Tensor &out, int64_t i) {
  const size_t n = out.data.size() / size_t(out.shape[0]);
  return {out.data.begin() + i * n, out.data.begin() + (i + 1) * n};
}

void expectRowInvariant(const RowKernel &rk, uint64_t seed) {
  std::vector<std::vector<uint8_t>> alone;
  for (int64_t p = 0; p < kProbes; ++p)
    alone.push_back(rowBytes(runRows(rk, {p}, 1), 0));
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
      const Tensor out = runRows(rk, ids, threads);
      for (int64_t i = 0; i < m; ++i) {
        if (ids[i] >= kProbes)
          continue;
        EXPECT_TRUE(rowBytes(out, i) == alone[ids[i]])
            << rk.kernel << ": probe " << ids[i] << " at row " << i << " of "
            << m << " on " << threads << " threads";
      }
    }
  }
}

TEST(BatchInvariance, Linear) {
  Rng rng(901);
  // Odd K and N (vector tails, partial blocks), and SmolLM2's K = 576.
  const std::pair<int64_t, int64_t> sizes[] = {{515, 133}, {200, 576}};
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

/// 64 sequences with long random histories written straight into a cache
/// whose blocks are scattered; steps append tokens whose q/k/v depend only
/// on (sequence, index in the step), so rerunning a step rewrites the same
/// K/V and a token's inputs are the same in every step it appears in.
class AttnSetup {
public:
  static constexpr int kSeqs = 64, kMaxNew = 48, kProbeLen = 700;
  AttnSetup(AttnShape a, uint64_t seed) : a_(a), rng_(seed) {
    const int64_t bs = 16, kd = a.kvHeads * a.headDim;
    std::vector<int64_t> lens(kSeqs);
    int64_t blocks = 0;
    for (int s = 0; s < kSeqs; ++s) {
      lens[s] = s == 0 ? kProbeLen : 1 + int64_t(rng_.gen() % 900);
      blocks += (lens[s] + kMaxNew) / bs + 1;
    }
    EXPECT_TRUE(
        storage_.allocate(cacheConfig(1, bs, a.kvHeads, a.headDim), blocks)
            .isOk());
    std::vector<int64_t> free(blocks);
    for (int64_t b = 0; b < blocks; ++b)
      free[b] = b;
    std::shuffle(free.begin(), free.end(), rng_.gen);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int s = 0; s < kSeqs; ++s) {
      Seq &q = seqs_.emplace_back();
      q.len = lens[s];
      for (int64_t b = 0; b < (q.len + kMaxNew) / bs + 1; ++b) {
        q.blocks.push_back(free.back());
        free.pop_back();
      }
      q.k.resize(size_t(q.len * kd));
      q.v.resize(size_t(q.len * kd));
      for (int64_t p = 0; p < q.len; ++p)
        for (int64_t i = 0; i < kd; ++i) {
          q.k[p * kd + i] = u(rng_.gen);
          q.v[p * kd + i] = u(rng_.gen);
          const int64_t slot = q.blocks[p / bs] * bs + p % bs;
          storage_.view().keys[0][slot * kd + i] = q.k[p * kd + i];
          storage_.view().values[0][slot * kd + i] = q.v[p * kd + i];
        }
      q.newQ = rng_.uniform({kMaxNew, a.heads * a.headDim});
      q.newK = rng_.uniform({kMaxNew, kd});
      q.newV = rng_.uniform({kMaxNew, kd});
    }
  }

  /// Runs a step of (sequence, new tokens) pairs; returns its output.
  Tensor step(const std::vector<std::pair<int, int64_t>> &parts, int threads) {
    const int64_t bs = storage_.view().blockSize;
    std::vector<int64_t> rows, pos, slots, ends;
    size_t width = 1;
    for (auto [s, n] : parts) {
      for (int64_t i = 0; i < n; ++i) {
        rows.push_back(i);
        pos.push_back(seqs_[s].len + i);
        slots.push_back(seqs_[s].blocks[pos.back() / bs] * bs +
                        pos.back() % bs);
      }
      ends.push_back(int64_t(pos.size()));
      width = std::max(width, seqs_[s].blocks.size());
    }
    Tensor q, k, v;
    for (auto [s, n] : parts) {
      std::vector<int64_t> ids(n);
      for (int64_t i = 0; i < n; ++i)
        ids[i] = i;
      append(&q, pickRows(seqs_[s].newQ, ids));
      append(&k, pickRows(seqs_[s].newK, ids));
      append(&v, pickRows(seqs_[s].newV, ids));
    }
    std::vector<int32_t> table(parts.size() * width, -1);
    for (size_t r = 0; r < parts.size(); ++r)
      for (size_t b = 0; b < seqs_[parts[r].first].blocks.size(); ++b)
        table[r * width + b] = int32_t(seqs_[parts[r].first].blocks[b]);
    Tensor bt = i32({int64_t(parts.size()), int64_t(width)}, table);
    Tensor pt = i64({int64_t(pos.size())}, pos);
    Tensor st = i64({int64_t(pos.size())}, slots);
    Tensor et = i64({int64_t(ends.size())}, ends);
    std::vector<Attr> attrs = attnAttrs(a_, 0);
    cpu::KernelContext ctx("paged_attention", "test/attn", &attrs,
                           &pool(threads));
    ctx.setKvCache(&storage_.view());
    for (const Tensor *t : {&q, &k, &v, &pt, &st, &bt, &et})
      ctx.inputs.push_back({true, t->data.data(), t->dtype, t->shape, "in"});
    const int64_t outFloats = int64_t(pos.size()) * a_.heads * a_.headDim;
    std::vector<float> buf(static_cast<size_t>(outFloats));
    cpu::KernelOutput o;
    o.data = buf.data();
    o.capacityBytes = buf.size() * 4;
    o.maxShape = {outFloats};
    o.name = "attn";
    ctx.outputs.push_back(o);
    Status s = cpu::findKernel("paged_attention")->fn(ctx);
    EXPECT_TRUE(s.isOk()) << s.message();
    return f32(ctx.outputs[0].shape, buf);
  }

  /// Dense attention in double for token `i` of a step of sequence 0 alone.
  void expectProbeClose(const Tensor &out, int64_t i) const {
    const Seq &q = seqs_[0];
    const int64_t kd = a_.kvHeads * a_.headDim, hd = a_.heads * a_.headDim;
    std::vector<float> k = q.k, v = q.v;
    k.insert(k.end(), ptr<float>(q.newK), ptr<float>(q.newK) + (i + 1) * kd);
    v.insert(v.end(), ptr<float>(q.newV), ptr<float>(q.newV) + (i + 1) * kd);
    const int64_t p = q.len + i;
    const int64_t lo = a_.window ? std::max<int64_t>(0, p - a_.window + 1) : 0;
    std::vector<double> ref(hd), mag(hd);
    for (int64_t h = 0; h < a_.heads; ++h)
      denseAttention(ptr<float>(q.newQ) + i * hd + h * a_.headDim, k, v, lo, p,
                     h / (a_.heads / a_.kvHeads), a_, &ref[h * a_.headDim],
                     &mag[h * a_.headDim]);
    Tensor row =
        f32({1, hd}, std::vector<float>(ptr<float>(out) + i * hd,
                                        ptr<float>(out) + (i + 1) * hd));
    expectClose(row, {1, hd}, ref, 2e-5, 1e-30, &mag);
  }

private:
  struct Seq {
    int64_t len = 0;
    std::vector<int64_t> blocks;
    std::vector<float> k, v;
    Tensor newQ, newK, newV;
  };
  static void append(Tensor *dst, const Tensor &rows) {
    if (dst->shape.empty()) {
      *dst = rows;
      return;
    }
    dst->shape[0] += rows.shape[0];
    dst->data.insert(dst->data.end(), rows.data.begin(), rows.data.end());
  }
  AttnShape a_;
  Rng rng_;
  KvCacheStorage storage_;
  std::vector<Seq> seqs_;
};

/// The output rows of sequence 0's tokens in a step, as bytes.
std::vector<uint8_t> probeRows(const Tensor &out,
                               const std::vector<std::pair<int, int64_t>> &p) {
  int64_t row = 0;
  for (auto [s, n] : p) {
    if (s == 0) {
      const size_t rb = out.data.size() / size_t(out.shape[0]);
      return {out.data.begin() + row * rb, out.data.begin() + (row + n) * rb};
    }
    row += n;
  }
  return {};
}

TEST(BatchInvariance, PagedAttention) {
  // GQA with an odd head_dim and full context (3 chunks of 256 at 700);
  // MHA with a sliding window that starts inside a chunk.
  const AttnShape shapes[] = {{6, 2, 20, 0, false}, {4, 4, 64, 300, false}};
  uint64_t seed = 904;
  for (const AttnShape &a : shapes) {
    SCOPED_TRACE("window " + std::to_string(a.window));
    AttnSetup setup(a, ++seed);
    for (int64_t probeTokens : {1, 5}) {
      const std::vector<std::pair<int, int64_t>> alone = {{0, probeTokens}};
      const Tensor ref = setup.step(alone, 1);
      for (int64_t i = 0; i < probeTokens; ++i)
        setup.expectProbeClose(ref, i);
      const std::vector<uint8_t> want = probeRows(ref, alone);
      // Decode: the probe among 63 other sequences at three positions.
      std::vector<std::vector<std::pair<int, int64_t>>> steps;
      for (int at : {0, 31, 63}) {
        std::vector<std::pair<int, int64_t>> st;
        for (int s = 1; s < AttnSetup::kSeqs; ++s)
          st.push_back({s, 1});
        st.insert(st.begin() + at, {0, probeTokens});
        steps.push_back(st);
      }
      // Prefill chunks of other sequences around it, and decodes.
      steps.push_back({{3, 40}, {0, probeTokens}, {7, 33}, {9, 1}, {12, 1}});
      steps.push_back({{5, 1}, {8, 47}, {0, probeTokens}});
      for (size_t i = 0; i < steps.size(); ++i)
        for (int threads : {1, 2, 3}) {
          EXPECT_TRUE(probeRows(setup.step(steps[i], threads), steps[i]) ==
                      want)
              << probeTokens << " probe tokens, step " << i << ", " << threads
              << " threads";
          EXPECT_TRUE(probeRows(setup.step(alone, threads), alone) == want)
              << "alone, " << threads << " threads";
        }
    }
  }
}

} // namespace
