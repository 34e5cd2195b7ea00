//===- FusedAttentionTest.cpp - rope_paged_attention and column offsets ---===//
//
// The compiler replaces `rope`(q), `rope`(k), `paged_attention` by one
// rope_paged_attention reading column ranges of a merged qkv projection, so
// the fused kernel must give exactly the same bits, and leave exactly the
// same K/V in the cache. Each scenario keeps two caches with the same block
// layout: the unfused kernels run on separate q/k/v tensors against one,
// the fused kernel on the merged tensor (the same buffer as all three
// inputs) against the other; every step compares the outputs and both
// caches bitwise and checks that the merged input was not modified. Steps
// are prefill (several sequences), decode and chunked prefill; shapes cover
// SmolLM2, GQA, MQA, an odd head_dim, partial rotary dims, llama3 scaling,
// sliding windows and windows long enough to be cut into several chunks
// (also on the decode path that spreads chunks over threads). The same
// scenarios without rope check paged_attention's offsets alone. The fused
// side also runs on a "block,head,token,dim" cache against the unfused
// "block,token,head,dim" one: layouts must not change a bit either. Then
// the errors, each of which must leave the cache untouched.
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

using namespace ingot;
using namespace ingot::test;

namespace {

struct RopeSpec {
  int64_t rotaryDim = 0; // 0: no rope, plain paged_attention with offsets
  double theta = 10000.0;
  bool llama3 = false;
};

std::vector<Attr> ropeAttrs(const RopeSpec &r) {
  std::vector<Attr> a = {intAttr("rotary_dim", r.rotaryDim),
                         floatAttr("theta", r.theta),
                         strAttr("scaling", r.llama3 ? "llama3" : "none")};
  if (r.llama3)
    for (Attr x : {floatAttr("factor", 8), floatAttr("low_freq_factor", 1),
                   floatAttr("high_freq_factor", 4),
                   intAttr("original_max_positions", 8192)})
      a.push_back(x);
  return a;
}

/// Runs an attention kernel with `kv` as the executor's cache.
Status runAttn(const std::string &kernel,
               const std::vector<const Tensor *> &ins,
               const std::vector<Attr> &attrs, const KvCacheView *kv,
               Tensor *out) {
  cpu::KernelContext ctx(kernel, "test/attn", &attrs, &testPool());
  ctx.setKvCache(kv);
  const char *names[] = {"qkv", "qkv", "qkv", "pos", "slots", "tables", "ends"};
  for (size_t i = 0; i < ins.size(); ++i)
    ctx.inputs.push_back({true, ins[i]->data.data(), ins[i]->dtype,
                          ins[i]->shape, i < 7 ? names[i] : "in"});
  std::vector<uint8_t> storage(4 << 20);
  cpu::KernelOutput o;
  o.data = storage.data();
  o.capacityBytes = storage.size();
  o.maxShape = {int64_t(storage.size() / 4)};
  o.name = "attn";
  ctx.outputs.push_back(o);
  if (Status s = cpu::findKernel(kernel)->fn(ctx); !s)
    return s;
  out->dtype = DType::F32;
  out->shape = ctx.outputs[0].shape;
  out->data.assign(storage.begin(), storage.begin() + count(out->shape) * 4);
  return Status::ok();
}

/// Columns [from, from + n) of every row of `t`.
Tensor columns(const Tensor &t, int64_t from, int64_t n) {
  const int64_t rows = t.shape[0], w = t.shape[1];
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r)
    v.insert(v.end(), ptr<float>(t) + r * w + from,
             ptr<float>(t) + r * w + from + n);
  return f32({rows, n}, v);
}

/// Where q, k and v sit in the merged rows: `lead` columns of padding, the
/// three in `order` (0 = q, 1 = k, 2 = v), `tail` columns of padding.
struct Layout {
  int64_t lead = 0;
  int order[3] = {0, 1, 2};
  int64_t tail = 0;
};

class TwinCaches {
public:
  TwinCaches(AttnShape a, RopeSpec r, Layout l, int64_t blockSize,
             int64_t numBlocks, int seqs, uint64_t seed,
             KvLayout fusedLayout = KvLayout::BlockTokenHeadDim)
      : a_(a), r_(r), rng_(seed), seqs_(seqs) {
    LlmConfig c = cacheConfig(2, blockSize, a.kvHeads, a.headDim);
    EXPECT_TRUE(unfused_.allocate(c, numBlocks).isOk());
    c.kvLayout = kvLayoutName(fusedLayout);
    EXPECT_TRUE(fused_.allocate(c, numBlocks).isOk());
    EXPECT_EQ(fused_.view().layout, fusedLayout);
    for (int64_t b = 0; b < numBlocks; ++b)
      free_.push_back(b);
    std::shuffle(free_.begin(), free_.end(), rng_.gen);
    const int64_t widths[3] = {a.heads * a.headDim, a.kvHeads * a.headDim,
                               a.kvHeads * a.headDim};
    int64_t at = l.lead;
    for (int i : l.order) {
      offsets_[i] = at;
      at += widths[i];
    }
    width_ = at + l.tail;
  }
  const KvCacheView &fusedView() const { return fused_.view(); }

  /// One step on layer 1 where sequence s gets counts[s] new tokens.
  void step(const std::vector<int64_t> &counts) {
    const int64_t bs = fused_.view().blockSize;
    std::vector<int64_t> pos, slots, ends;
    std::vector<int> inStep;
    for (int s = 0; s < int(seqs_.size()); ++s) {
      if (!counts[s])
        continue;
      Seq &q = seqs_[s];
      for (int64_t i = 0; i < counts[s]; ++i, ++q.len) {
        if (q.len % bs == 0) {
          q.blocks.push_back(free_.back());
          free_.pop_back();
        }
        pos.push_back(q.len);
        slots.push_back(q.blocks[q.len / bs] * bs + q.len % bs);
      }
      inStep.push_back(s);
      ends.push_back(int64_t(pos.size()));
    }
    const int64_t t = int64_t(pos.size());
    size_t tw = 1;
    for (int s : inStep)
      tw = std::max(tw, seqs_[s].blocks.size() + 1); // -1 padded
    std::vector<int32_t> table(inStep.size() * tw, -1);
    for (size_t r = 0; r < inStep.size(); ++r)
      for (size_t b = 0; b < seqs_[inStep[r]].blocks.size(); ++b)
        table[r * tw + b] = int32_t(seqs_[inStep[r]].blocks[b]);
    Tensor bt = i32({int64_t(inStep.size()), int64_t(tw)}, table);
    Tensor pt = i64({t}, pos), st = i64({t}, slots);
    Tensor et = i64({int64_t(ends.size())}, ends);
    const Tensor qkv = rng_.uniform({t, width_});
    const Tensor before = qkv;

    // Unfused: separate tensors, rope on each, then paged_attention.
    const int64_t d = a_.headDim;
    Tensor q = columns(qkv, offsets_[0], a_.heads * d);
    Tensor k = columns(qkv, offsets_[1], a_.kvHeads * d);
    Tensor v = columns(qkv, offsets_[2], a_.kvHeads * d);
    if (r_.rotaryDim) {
      for (Tensor *x : {&q, &k}) {
        std::vector<Attr> ra = ropeAttrs(r_);
        ra.push_back(intAttr("num_heads", x == &q ? a_.heads : a_.kvHeads));
        ra.push_back(intAttr("head_dim", d));
        *x = runOk({"rope", {x, &pt}, ra});
      }
    }
    Tensor want, got;
    Status s = runAttn("paged_attention", {&q, &k, &v, &pt, &st, &bt, &et},
                       attnAttrs(a_, 1), &unfused_.view(), &want);
    ASSERT_TRUE(s.isOk()) << s.message();

    std::vector<Attr> fa = attnAttrs(a_, 1);
    fa.push_back(intAttr("q_offset", offsets_[0]));
    fa.push_back(intAttr("k_offset", offsets_[1]));
    fa.push_back(intAttr("v_offset", offsets_[2]));
    if (r_.rotaryDim)
      for (const Attr &x : ropeAttrs(r_))
        fa.push_back(x);
    s = runAttn(r_.rotaryDim ? "rope_paged_attention" : "paged_attention",
                {&qkv, &qkv, &qkv, &pt, &st, &bt, &et}, fa, &fused_.view(),
                &got);
    ASSERT_TRUE(s.isOk()) << s.message();
    ASSERT_EQ(got.shape, want.shape);
    ASSERT_TRUE(got.data == want.data) << "outputs differ";
    ASSERT_TRUE(qkv.data == before.data) << "the fused kernel wrote its input";
    // Row by row, as the layouts may differ; the rows cover every float.
    const KvCacheView &u = unfused_.view(), &f = fused_.view();
    const size_t n = size_t(d) * sizeof(float);
    for (int64_t layer = 0; layer < 2; ++layer)
      for (int64_t slot = 0; slot < u.numSlots(); ++slot)
        for (int64_t h = 0; h < a_.kvHeads; ++h) {
          const int64_t x = u.rowOffset(slot, h), y = f.rowOffset(slot, h);
          ASSERT_EQ(std::memcmp(u.keys[layer] + x, f.keys[layer] + y, n), 0)
              << "K caches differ in layer " << layer << " slot " << slot;
          ASSERT_EQ(std::memcmp(u.values[layer] + x, f.values[layer] + y, n),
                    0)
              << "V caches differ in layer " << layer << " slot " << slot;
        }
  }

private:
  struct Seq {
    int64_t len = 0;
    std::vector<int64_t> blocks;
  };
  AttnShape a_;
  RopeSpec r_;
  Rng rng_;
  KvCacheStorage unfused_, fused_;
  std::vector<int64_t> free_;
  std::vector<Seq> seqs_;
  int64_t offsets_[3] = {0, 0, 0}, width_ = 0;
};

struct Case {
  AttnShape a;
  RopeSpec r;
  Layout l;
};

std::string describe(const Case &c) {
  return "H=" + std::to_string(c.a.heads) +
         " KV=" + std::to_string(c.a.kvHeads) +
         " D=" + std::to_string(c.a.headDim) +
         " window=" + std::to_string(c.a.window) +
         " rotary=" + std::to_string(c.r.rotaryDim) +
         (c.r.llama3 ? " llama3" : "") + " lead=" + std::to_string(c.l.lead);
}

const Layout kQkv{0, {0, 1, 2}, 0};       // SmolLM2's merged projection
const Layout kScrambled{3, {2, 0, 1}, 5}; // v, q, k between padding

const Case kCases[] = {
    {{9, 3, 64, 0, false}, {64, 100000.0, false}, kQkv}, // SmolLM2
    {{6, 2, 20, 5, true}, {8, 10000.0, false}, kScrambled},
    {{8, 2, 33, 0, false}, {32, 500000.0, true}, kQkv}, // odd D, llama3
    {{4, 4, 16, 9, false}, {10, 10000.0, false}, kScrambled},
    {{9, 3, 64, 0, false}, {}, kQkv}, // offsets only
    {{6, 2, 20, 5, true}, {}, kScrambled},
};

TEST(FusedAttention, ShortStepsMatchUnfused) {
  uint64_t seed = 1200;
  for (const Case &c : kCases) {
    SCOPED_TRACE(describe(c));
    TwinCaches tc(c.a, c.r, c.l, 4, 64, 3, ++seed);
    tc.step({13, 7, 22}); // prefill, causal within the step
    for (int i = 0; i < 3; ++i)
      tc.step({1, 1, 1}); // decode
    tc.step({5, 1, 0});   // chunked prefill next to a decode
    tc.step({0, 0, 1});
  }
}

TEST(FusedAttention, LongWindowsMatchUnfused) {
  // Windows of several 256-position chunks, on both attention paths: one
  // work item per (token, KV head) in prefill, per chunk in decode.
  const Case cases[] = {
      {{9, 3, 64, 0, false}, {64, 100000.0, false}, kQkv},
      {{4, 1, 64, 300, true}, {64, 500000.0, true}, kScrambled},
      {{6, 2, 34, 0, false}, {16, 10000.0, false}, kScrambled},
      {{4, 1, 64, 300, true}, {}, kQkv},
  };
  uint64_t seed = 1250;
  for (const Case &c : cases) {
    SCOPED_TRACE(describe(c));
    TwinCaches tc(c.a, c.r, c.l, 16, 64, 2, ++seed);
    tc.step({700, 37});
    tc.step({1, 0});
    tc.step({1, 1});
    tc.step({3, 0});
  }
}

TEST(FusedAttention, OtherCacheLayoutMatchesUnfused) {
  // Fused (rope_)paged_attention on "block,head,token,dim" against the
  // unfused kernels on "block,token,head,dim": short steps on 4-token
  // blocks (GQA, MQA, windows, multi-sequence, chunked prefill), then long
  // windows on both work splits.
  uint64_t seed = 1270;
  for (const Case &c : kCases) {
    SCOPED_TRACE(describe(c));
    TwinCaches tc(c.a, c.r, c.l, 4, 64, 3, ++seed,
                  KvLayout::BlockHeadTokenDim);
    tc.step({13, 7, 22});
    tc.step({1, 1, 1});
    tc.step({5, 1, 0});
    tc.step({0, 0, 1});
  }
  const Case longCases[] = {
      {{9, 3, 64, 0, false}, {64, 100000.0, false}, kQkv},
      {{4, 1, 64, 300, true}, {64, 500000.0, true}, kScrambled},
      {{4, 1, 64, 300, true}, {}, kQkv},
  };
  for (const Case &c : longCases) {
    SCOPED_TRACE(describe(c));
    TwinCaches tc(c.a, c.r, c.l, 16, 64, 2, ++seed,
                  KvLayout::BlockHeadTokenDim);
    tc.step({700, 37});
    tc.step({1, 0});
    tc.step({1, 1});
  }
}

TEST(FusedAttention, OffsetAndRopeErrorsLeaveTheCacheUntouched) {
  const AttnShape a{2, 1, 8, 0, false};
  KvCacheStorage storage;
  ASSERT_TRUE(storage.allocate(cacheConfig(1, 4, 1, 8), 4).isOk());
  const KvCacheView *kv = &storage.view();
  Rng rng(1290);
  Tensor qkv = rng.uniform({2, 32}); // q 16, k 8, v 8
  Tensor pos = i64({2}, {0, 1}), slots = i64({2}, {4, 5});
  Tensor table = i32({1, 2}, {1, -1}), ends = i64({1}, {2});
  auto run = [&](const std::string &kernel, int64_t qo, int64_t ko, int64_t vo,
                 RopeSpec r = {8, 10000.0, false}) {
    std::vector<Attr> attrs = attnAttrs(a, 0);
    attrs.push_back(intAttr("q_offset", qo));
    attrs.push_back(intAttr("k_offset", ko));
    attrs.push_back(intAttr("v_offset", vo));
    if (kernel == "rope_paged_attention")
      for (const Attr &x : ropeAttrs(r))
        attrs.push_back(x);
    Tensor out;
    return runAttn(kernel, {&qkv, &qkv, &qkv, &pos, &slots, &table, &ends},
                   attrs, kv, &out);
  };
  auto expectError = [&](const Status &s, const std::string &kernel,
                         const std::string &part) {
    ASSERT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("(" + kernel + "): " + part), std::string::npos)
        << s.message();
    for (int64_t i = 0; i < kv->numSlots() * kv->slotFloats(); ++i)
      ASSERT_TRUE(kv->keys[0][i] == 0.0f && kv->values[0][i] == 0.0f)
          << "the failed step wrote the cache";
  };
  for (const std::string k : {"paged_attention", "rope_paged_attention"}) {
    SCOPED_TRACE(k);
    expectError(run(k, 17, 16, 24), k,
                "input 0 'qkv' (q): columns [17, 33) (q_offset 17 + 16) are "
                "outside its rows of 32 values [2,32]");
    expectError(run(k, 0, -1, 24), k, "input 1 'qkv' (k): columns [-1, 7)");
    expectError(run(k, 0, 16, 25), k,
                "input 2 'qkv' (v): columns [25, 33) (v_offset 25 + 8)");
  }
  expectError(run("rope_paged_attention", 0, 16, 24, {7, 10000.0, false}),
              "rope_paged_attention", "rotary_dim must be even");
  expectError(run("rope_paged_attention", 0, 16, 24, {10, 10000.0, false}),
              "rope_paged_attention",
              "rotary_dim must be even and in (0, "
              "head_dim = 8]");
  // Offsets 0 into the wide merged input are valid (q, k and v are then
  // its first columns), as are the right ones.
  EXPECT_TRUE(run("paged_attention", 0, 0, 0).isOk());
  EXPECT_TRUE(run("rope_paged_attention", 0, 16, 24).isOk());
}

} // namespace
