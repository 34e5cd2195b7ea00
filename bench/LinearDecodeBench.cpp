//===- LinearDecodeBench.cpp - Decode bandwidth of linear -----------------===//
//
// A benchmark, not a test (ctest never runs it): prints the GB/s of linear
// on SmolLM2's shapes at M = 1, 4 and 32, row-major ("nk") next to packed
// ("nk16") weights, and a memory-read probe measured in the same run. Run
//   build/bin/bench-linear-decode   (INGOT_BENCH_THREADS, INGOT_BENCH_ROUNDS)
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include "ingot/Probe.h"
#include "ingot/WeightLayout.h"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>

using namespace ingot;
using namespace ingot::test;

namespace {

// --- Measurement, not a test: decode GB/s against a memory-read probe. ---
// The machine may be shared: every case runs once per round, interleaved
// with the others, and the best round counts, so all figures come from the
// quietest moments of the same run.

/// One call of linear per weight, cycling through `copies` distinct [n, k]
/// weights per measurement (enough to defeat the caches: every call reads
/// its weights from memory, as at decode), stored `layout` ("nk": row-major,
/// "nk16": packed, WeightLayout.h).
struct LinearCase {
  LinearCase(DType dt, int64_t m, int64_t n, int64_t k, std::string layout)
      : dt(dt), m(m), n(n), k(k), layout(std::move(layout)) {
    const int64_t bytes = n * k * int64_t(dtypeSize(dt));
    copies = int(std::max<int64_t>(1, (int64_t(96) << 20) / bytes));
  }
  DType dt;
  int64_t m, n, k;
  std::string layout;
  int copies = 1;
  std::vector<std::shared_ptr<Tensor>> ws; // shared by a layout's m cases
  Tensor x;
  std::vector<float> y;

  void setUp(std::vector<std::shared_ptr<Tensor>> shared) {
    Rng rng(510);
    ws = std::move(shared);
    x = rng.uniform({m, k});
    y.resize(size_t(m * n));
  }
  void run(ThreadPool &pool) {
    const std::vector<Attr> attrs = {strAttr("w_layout", layout)};
    for (const auto &w : ws) {
      cpu::KernelContext ctx("linear", "bench", &attrs, &pool);
      ctx.inputs.resize(2);
      ctx.inputs[0] = {true, x.data.data(), DType::F32, {m, k}, "x"};
      ctx.inputs[1] = {true, w->data.data(), dt, {n, k}, "w"};
      if (layout == "nk16")
        ctx.inputs[1].layout = "nk16";
      cpu::KernelOutput o;
      o.data = y.data();
      o.capacityBytes = m * n * 4;
      ctx.outputs.push_back(o);
      ASSERT_TRUE(cpu::findKernel("linear")->fn(ctx).isOk());
    }
  }
  double bytes() const {
    return double(n * k * int64_t(dtypeSize(dt))) * double(ws.size());
  }
};

/// `copies` random [n, k] weights of `dt`, row-major or packed.
std::vector<std::shared_ptr<Tensor>> weights(DType dt, int64_t n, int64_t k,
                                             int copies, bool pack) {
  Rng rng(77);
  std::vector<std::shared_ptr<Tensor>> ws;
  for (int c = 0; c < copies; ++c) {
    auto w = std::make_shared<Tensor>(makeWeight(rng, dt, {n, k}).t);
    if (pack) {
      Tensor p = *w;
      EXPECT_TRUE(
          packWeight("nk16", w->data.data(), n, k, dtypeSize(dt), p.data.data())
              .isOk());
      *w = std::move(p);
    }
    ws.push_back(std::move(w));
  }
  return ws;
}

TEST(LlmBench, LinearDecodeBandwidth) {
  ThreadPool pool(std::getenv("INGOT_BENCH_THREADS")
                      ? std::atoi(std::getenv("INGOT_BENCH_THREADS"))
                      : 2);
  // SmolLM2-135M's decode linears: q/o-like 576->576 is covered by
  // 576->1536 (gate/up) and 1536->576 (down); 576->49152 is the LM head.
  const std::pair<int64_t, int64_t> shapes[] = {
      {1536, 576}, {576, 1536}, {49152, 576}};
  std::vector<LinearCase> cases;
  for (DType dt : {DType::F32, DType::BF16})
    for (auto [n, k] : shapes)
      for (const char *layout : {"nk", "nk16"}) {
        LinearCase proto(dt, 1, n, k, layout);
        auto ws =
            weights(dt, n, k, proto.copies, layout == std::string("nk16"));
        for (int64_t m : {1, 4, 32}) {
          cases.emplace_back(dt, m, n, k, layout);
          cases.back().setUp(ws);
        }
      }
  auto seconds = [](const std::function<void()> &fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  const int rounds = std::getenv("INGOT_BENCH_ROUNDS")
                         ? std::atoi(std::getenv("INGOT_BENCH_ROUNDS"))
                         : 15;
  // The runtime's ceiling probe (the one `ingot bench` uses), its best
  // reading over the rounds, interleaved with the cases.
  double probeBest = 0;
  std::vector<double> best(cases.size(), 1e30);
  for (int round = 0; round < rounds; ++round) {
    probeBest = std::max(probeBest, probeCeilings(pool, 0.2).readGBps);
    for (size_t i = 0; i < cases.size(); ++i)
      best[i] = std::min(best[i], seconds([&] { cases[i].run(pool); }));
  }
  std::printf("memory-read probe (ingot::probeCeilings, %d threads): %.1f "
              "GB/s\n",
              int(pool.size()), probeBest);
  std::printf("linear, %d threads, weights read from memory (GB/s of "
              "weights; us per call)\n",
              int(pool.size()));
  std::printf("%-5s %-12s %3s %16s %16s %7s\n", "dtype", "K->N", "m", "nk",
              "nk16", "nk16/nk");
  for (size_t i = 0; i + 6 <= cases.size(); i += 6)
    for (size_t j = 0; j < 3; ++j) {
      const LinearCase &a = cases[i + j], &b = cases[i + 3 + j];
      const double ga = a.bytes() / best[i + j] / 1e9,
                   gb = b.bytes() / best[i + 3 + j] / 1e9;
      const std::string shape =
          std::to_string(a.k) + "->" + std::to_string(a.n);
      std::printf("%-5s %-12s %3lld %8.1f %7.1f %8.1f %7.1f %7.2f\n",
                  dtypeName(a.dt), shape.c_str(), (long long)a.m, ga,
                  best[i + j] / double(a.ws.size()) * 1e6, gb,
                  best[i + 3 + j] / double(b.ws.size()) * 1e6, gb / ga);
    }
}

} // namespace
