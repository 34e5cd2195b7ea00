//===- FusedKernelsBench.cpp - Fused decoder kernels against unfused ------===//
//
// A benchmark, not a test (ctest never runs it): microseconds per call of
//   rope(q) + rope(k) + paged_attention   vs   rope_paged_attention
//   add + rms_norm                        vs   add_rms_norm
// at SmolLM2-135M decode shapes (hidden 576, 9 heads, 3 KV heads, head_dim
// 64): 1 and 32 sequences of one new token each, every token at context
// 256 (positions 0..255 cached). The unfused rope runs in place on separate
// q/k tensors, as the memory plan does; the fused kernel reads one merged
// [T, 960] qkv row through offsets. Run it with
//   build/bin/bench-fused-kernels   (INGOT_BENCH_THREADS, INGOT_BENCH_ROUNDS)
// Every case runs once per round, interleaved with the others, and the best
// round counts, so a shared machine's noise hits all cases alike.
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include <chrono>
#include <cstdio>
#include <functional>

using namespace ingot;
using namespace ingot::test;

namespace {

constexpr int64_t kHeads = 9, kKvHeads = 3, kHeadDim = 64, kHidden = 576;
constexpr int64_t kContext = 256, kBlock = 16;

/// Calls `kernel` with `ins` (any may repeat) writing `outs`.
void call(const char *kernel, const std::vector<Attr> &attrs, ThreadPool &pool,
          const KvCacheView *kv, const std::vector<const Tensor *> &ins,
          const std::vector<Tensor *> &outs) {
  cpu::KernelContext ctx(kernel, "bench", &attrs, &pool);
  ctx.setKvCache(kv);
  for (const Tensor *t : ins)
    ctx.inputs.push_back({true, t->data.data(), t->dtype, t->shape, "in"});
  for (Tensor *t : outs) {
    cpu::KernelOutput o;
    o.data = t->data.data();
    o.dtype = DType::F32;
    o.capacityBytes = t->data.size();
    ctx.outputs.push_back(o);
  }
  Status s = cpu::findKernel(kernel)->fn(ctx);
  ASSERT_TRUE(s.isOk()) << s.message();
}

/// One decode step of `seqs` sequences at context kContext.
struct AttnCase {
  int64_t seqs;
  KvCacheStorage cache;
  Tensor q, k, v, qkv, pos, slots, table, ends, out;
  std::vector<Attr> ropeOnly, attn, fused;

  explicit AttnCase(int64_t s) : seqs(s) {
    Rng rng(1300 + s);
    const int64_t blocksPer = kContext / kBlock;
    EXPECT_TRUE(cache
                    .allocate(cacheConfig(1, kBlock, kKvHeads, kHeadDim),
                              seqs * blocksPer)
                    .isOk());
    const KvCacheView &kv = cache.view();
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int64_t i = 0; i < kv.numSlots() * kv.slotFloats(); ++i) {
      kv.keys[0][i] = u(rng.gen);
      kv.values[0][i] = u(rng.gen);
    }
    std::vector<int64_t> p, sl, e;
    std::vector<int32_t> tb;
    for (int64_t i = 0; i < seqs; ++i) {
      for (int64_t b = 0; b < blocksPer; ++b)
        tb.push_back(int32_t(i * blocksPer + b));
      p.push_back(kContext - 1);
      sl.push_back(i * blocksPer * kBlock + kContext - 1);
      e.push_back(i + 1);
    }
    pos = i64({seqs}, p);
    slots = i64({seqs}, sl);
    ends = i64({seqs}, e);
    table = i32({seqs, blocksPer}, tb);
    const int64_t kd = kKvHeads * kHeadDim;
    qkv = rng.uniform({seqs, kHidden + 2 * kd});
    q = rng.uniform({seqs, kHidden});
    k = rng.uniform({seqs, kd});
    v = rng.uniform({seqs, kd});
    out = f32({seqs, kHidden}, std::vector<float>(seqs * kHidden));
    ropeOnly = {intAttr("rotary_dim", kHeadDim), floatAttr("theta", 100000.0),
                strAttr("scaling", "none")};
    const AttnShape a{kHeads, kKvHeads, kHeadDim, 0, false};
    attn = attnAttrs(a, 0);
    fused = attn;
    for (const Attr &x : ropeOnly)
      fused.push_back(x);
    for (Attr x : {intAttr("q_offset", 0), intAttr("k_offset", kHidden),
                   intAttr("v_offset", kHidden + kd)})
      fused.push_back(x);
  }
  void unfusedStep(ThreadPool &pool) {
    std::vector<Attr> rq = ropeOnly, rk = ropeOnly;
    rq.push_back(intAttr("num_heads", kHeads));
    rk.push_back(intAttr("num_heads", kKvHeads));
    for (std::vector<Attr> *r : {&rq, &rk})
      r->push_back(intAttr("head_dim", kHeadDim));
    call("rope", rq, pool, nullptr, {&q, &pos}, {&q}); // in place
    call("rope", rk, pool, nullptr, {&k, &pos}, {&k});
    call("paged_attention", attn, pool, &cache.view(),
         {&q, &k, &v, &pos, &slots, &table, &ends}, {&out});
  }
  void fusedStep(ThreadPool &pool) {
    call("rope_paged_attention", fused, pool, &cache.view(),
         {&qkv, &qkv, &qkv, &pos, &slots, &table, &ends}, {&out});
  }
};

struct NormCase {
  Tensor a, b, w, sum, y;
  std::vector<Attr> attrs = {floatAttr("epsilon", 1e-5)};
  explicit NormCase(int64_t rows) {
    Rng rng(1400 + rows);
    a = rng.uniform({rows, kHidden});
    b = rng.uniform({rows, kHidden});
    w = makeWeight(rng, DType::BF16, {kHidden}).t;
    sum = a;
    y = a;
  }
  // The planner puts add's output over a and rms_norm's output elsewhere;
  // add_rms_norm's sum over a and y over b. a drifts, which is harmless.
  void unfusedStep(ThreadPool &pool) {
    call("add", {}, pool, nullptr, {&a, &b}, {&a});
    call("rms_norm", attrs, pool, nullptr, {&a, &w}, {&y});
  }
  void fusedStep(ThreadPool &pool) {
    call("add_rms_norm", attrs, pool, nullptr, {&a, &b, &w}, {&a, &b});
  }
};

TEST(FusedKernelsBench, SmolLM2Decode) {
  const int threads = std::getenv("INGOT_BENCH_THREADS")
                          ? std::atoi(std::getenv("INGOT_BENCH_THREADS"))
                          : 2;
  const int rounds = std::getenv("INGOT_BENCH_ROUNDS")
                         ? std::atoi(std::getenv("INGOT_BENCH_ROUNDS"))
                         : 30;
  ThreadPool pool{unsigned(threads)};
  constexpr int kReps = 50; // calls per timed run
  struct Row {
    std::string label;
    std::function<void()> unfused, fused;
    double bestU = 1e30, bestF = 1e30;
  };
  std::vector<std::unique_ptr<AttnCase>> attn;
  std::vector<std::unique_ptr<NormCase>> norm;
  std::vector<Row> rows;
  for (int64_t t : {1, 32}) {
    attn.push_back(std::make_unique<AttnCase>(t));
    AttnCase *c = attn.back().get();
    rows.push_back({"rope+paged_attention T=" + std::to_string(t),
                    [c, &pool] { c->unfusedStep(pool); },
                    [c, &pool] { c->fusedStep(pool); }});
  }
  for (int64_t t : {1, 32}) {
    norm.push_back(std::make_unique<NormCase>(t));
    NormCase *c = norm.back().get();
    rows.push_back({"add+rms_norm T=" + std::to_string(t),
                    [c, &pool] { c->unfusedStep(pool); },
                    [c, &pool] { c->fusedStep(pool); }});
  }
  auto seconds = [](const std::function<void()> &fn) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < kReps; ++r)
      fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
               .count() /
           kReps;
  };
  for (int round = 0; round < rounds; ++round)
    for (Row &r : rows) {
      r.bestU = std::min(r.bestU, seconds(r.unfused));
      r.bestF = std::min(r.bestF, seconds(r.fused));
    }
  std::printf("SmolLM2 decode shapes, context %lld, %d threads, best of %d "
              "rounds (us per call)\n",
              (long long)kContext, threads, rounds);
  std::printf("%-28s %10s %10s %8s\n", "case", "unfused", "fused", "speedup");
  for (const Row &r : rows)
    std::printf("%-28s %10.2f %10.2f %8.2f\n", r.label.c_str(), r.bestU * 1e6,
                r.bestF * 1e6, r.bestU / r.bestF);
}

} // namespace
