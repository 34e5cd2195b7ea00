//===- BatchInvarianceAttentionTest.cpp - Attention ignores its batch -----===//
//
// As BatchInvarianceTest.cpp, for paged_attention and rope_paged_attention:
// a token's output must be bitwise the same alone as next to 63 decoding
// sequences or next to prefill chunks of other sequences, on any number of
// threads, with windows long enough to be cut into several chunks (whose
// merge is also checked against dense attention in double).
//
//===----------------------------------------------------------------------===//

#include "BatchInvarianceUtil.h"

using namespace ingot;
using namespace ingot::test;

namespace {

/// 64 sequences with long random histories written straight into a cache
/// whose blocks are scattered; steps append tokens whose q/k/v depend only
/// on (sequence, index in the step), so rerunning a step rewrites the same
/// K/V and a token's inputs are the same in every step it appears in. With
/// `rotaryDim` > 0 the steps run rope_paged_attention on one merged [q|k|v]
/// tensor (columns addressed by offsets) instead of paged_attention.
class AttnSetup {
public:
  static constexpr int kSeqs = 64, kMaxNew = 48, kProbeLen = 740;
  AttnSetup(AttnShape a, int64_t rotaryDim, uint64_t seed)
      : a_(a), rotaryDim_(rotaryDim), rng_(seed) {
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
    const char *kernel = "paged_attention";
    Tensor qkv;
    std::vector<const Tensor *> ins = {&q, &k, &v, &pt, &st, &bt, &et};
    if (rotaryDim_) {
      kernel = "rope_paged_attention";
      qkv = concatColumns({&q, &k, &v});
      ins[0] = ins[1] = ins[2] = &qkv;
      const int64_t qd = a_.heads * a_.headDim, kd = a_.kvHeads * a_.headDim;
      for (Attr x :
           {intAttr("q_offset", 0), intAttr("k_offset", qd),
            intAttr("v_offset", qd + kd), intAttr("rotary_dim", rotaryDim_),
            floatAttr("theta", 500000.0), strAttr("scaling", "llama3"),
            floatAttr("factor", 8), floatAttr("low_freq_factor", 1),
            floatAttr("high_freq_factor", 4),
            intAttr("original_max_positions", 8192)})
        attrs.push_back(x);
    }
    cpu::KernelContext ctx(kernel, "test/attn", &attrs,
                           &invariancePool(threads));
    ctx.setKvCache(&storage_.view());
    for (const Tensor *t : ins)
      ctx.inputs.push_back({true, t->data.data(), t->dtype, t->shape, "in"});
    const int64_t outFloats = int64_t(pos.size()) * a_.heads * a_.headDim;
    std::vector<float> buf(static_cast<size_t>(outFloats));
    cpu::KernelOutput o;
    o.data = buf.data();
    o.capacityBytes = buf.size() * 4;
    o.maxShape = {outFloats};
    o.name = "attn";
    ctx.outputs.push_back(o);
    Status s = cpu::findKernel(kernel)->fn(ctx);
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
  /// Rows of the [T, *] tensors side by side.
  static Tensor concatColumns(const std::vector<const Tensor *> &parts) {
    const int64_t t = parts[0]->shape[0];
    std::vector<float> v;
    for (int64_t r = 0; r < t; ++r)
      for (const Tensor *p : parts)
        v.insert(v.end(), ptr<float>(*p) + r * p->shape[1],
                 ptr<float>(*p) + (r + 1) * p->shape[1]);
    int64_t w = 0;
    for (const Tensor *p : parts)
      w += p->shape[1];
    return f32({t, w}, v);
  }
  static void append(Tensor *dst, const Tensor &rows) {
    if (dst->shape.empty()) {
      *dst = rows;
      return;
    }
    dst->shape[0] += rows.shape[0];
    dst->data.insert(dst->data.end(), rows.data.begin(), rows.data.end());
  }
  AttnShape a_;
  int64_t rotaryDim_;
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

/// The same token alone, next to 63 decoding sequences, and next to
/// prefill chunks of other sequences, on 1-3 threads; without rope, the
/// token's output is also checked against dense attention in double.
void expectAttentionInvariant(const AttnShape &a, int64_t rotaryDim,
                              uint64_t seed) {
  AttnSetup setup(a, rotaryDim, seed);
  for (int64_t probeTokens : {1, 5}) {
    const std::vector<std::pair<int, int64_t>> alone = {{0, probeTokens}};
    const Tensor ref = setup.step(alone, 1);
    if (!rotaryDim)
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
        EXPECT_TRUE(probeRows(setup.step(steps[i], threads), steps[i]) == want)
            << probeTokens << " probe tokens, step " << i << ", " << threads
            << " threads";
        EXPECT_TRUE(probeRows(setup.step(alone, threads), alone) == want)
            << "alone, " << threads << " threads";
      }
  }
}

/// Row `i` of a step's output, as bytes.
std::vector<uint8_t> outputRow(const Tensor &out, int64_t i) {
  const size_t rb = out.data.size() / size_t(out.shape[0]);
  return {out.data.begin() + i * rb, out.data.begin() + (i + 1) * rb};
}

/// A prefill's tokens go through attention in runs of consecutive
/// positions: each token must get the bits it gets as the last token of a
/// shorter prefill, where its run is cut elsewhere, or alone (decode). The
/// probe's 48 new positions 740..787 cross the chunk boundary at 768.
void expectPrefillRunsInvariant(const AttnShape &a, int64_t rotaryDim,
                                uint64_t seed) {
  AttnSetup setup(a, rotaryDim, seed);
  const Tensor all = setup.step({{0, AttnSetup::kMaxNew}}, 2);
  for (int64_t n : {1, 2, 8, 9, 17, 25, 28, 29, 30, 47, 48})
    for (int threads : {1, 3})
      EXPECT_TRUE(outputRow(setup.step({{0, n}}, threads), n - 1) ==
                  outputRow(all, n - 1))
          << "token " << n - 1 << " of 48, " << threads << " threads";
}

// GQA with an odd head_dim and full context (3 chunks of 256 at 740); MHA
// with a sliding window that starts inside a chunk.
const AttnShape kShapes[] = {{6, 2, 20, 0, false}, {4, 4, 64, 300, false}};

TEST(BatchInvariance, PagedAttention) {
  uint64_t seed = 904;
  for (const AttnShape &a : kShapes) {
    SCOPED_TRACE("window " + std::to_string(a.window));
    expectAttentionInvariant(a, 0, ++seed);
    expectPrefillRunsInvariant(a, 0, ++seed);
  }
}

TEST(BatchInvariance, RopePagedAttention) {
  // Partial rotary dims on the first shape; llama3 frequencies.
  uint64_t seed = 914;
  for (const AttnShape &a : kShapes) {
    SCOPED_TRACE("window " + std::to_string(a.window));
    expectAttentionInvariant(a, a.headDim == 20 ? 12 : 64, ++seed);
    expectPrefillRunsInvariant(a, a.headDim == 20 ? 12 : 64, ++seed);
  }
}

} // namespace
