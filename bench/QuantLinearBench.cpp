//===- QuantLinearBench.cpp - Linear on quantised weights against f32 -----===//
//
// A benchmark, not a test (ctest never runs it): GB/s of the weights read
// and GFLOP/s of linear on SmolLM2's shapes for f32, bf16, q8, q4, q4m
// (group 32), f8e4m3 (per channel) and "q16"-packed q8/q4/q4m (int8
// activations) weights at M = 1, 4, 32 and 128, next
// to the runtime's memory-read probe and f32 peak measured in the same run
// (best of interleaved rounds, so a shared machine's quiet moments count).
//   build/bin/bench-quant-linear   (INGOT_BENCH_THREADS, INGOT_BENCH_ROUNDS)
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include "ingot/Probe.h"
#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

#include <chrono>
#include <cstdlib>
#include <memory>

using namespace ingot;
using namespace ingot::test;

namespace {

struct Format {
  DType dt;
  int64_t group; // 0: per channel (group = K); ignored for f32/bf16
  bool q16 = false; // packed "q16", int8 activations (LinearQ16.h)
};

/// Weights of one format and shape, enough distinct copies (~96 MiB) that
/// every call reads them from memory, as decode does.
struct Weights {
  Format f;
  int64_t n, k;
  std::vector<std::vector<uint8_t>> copies;
  int64_t bytesPerCopy = 0;
  int64_t group() const { return f.group ? f.group : k; }

  Weights(Format fmt, int64_t nn, int64_t kk) : f(fmt), n(nn), k(kk) {
    bytesPerCopy = isQuantDType(f.dt)
                       ? quantTensorBytes(f.dt, n, k, group())
                       : n * k * int64_t(dtypeSize(f.dt));
    const int count = int(std::max<int64_t>(1, (int64_t(96) << 20) / bytesPerCopy));
    Rng rng(77);
    for (int c = 0; c < count; ++c) {
      Tensor w = makeWeight(rng, isQuantDType(f.dt) ? DType::F32 : f.dt, {n, k}).t;
      if (!isQuantDType(f.dt)) {
        copies.push_back(w.data);
        continue;
      }
      std::vector<uint8_t> q(static_cast<size_t>(bytesPerCopy));
      EXPECT_TRUE(quantizeTensor({f.dt, group()}, DType::F32, w.data.data(), n,
                                 k, q.data())
                      .isOk());
      if (f.q16) {
        std::vector<uint8_t> p(q.size());
        EXPECT_TRUE(packQ16(f.dt, q.data(), n, k, group(), p.data()).isOk());
        q = std::move(p);
      }
      copies.push_back(std::move(q));
    }
  }
};

double runOnce(const Weights &w, int64_t m, const Tensor &x,
               std::vector<float> &y, ThreadPool &pool) {
  const std::vector<Attr> attrs = {strAttr("w_layout", w.f.q16 ? "q16" : "nk")};
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto &bytes : w.copies) {
    cpu::KernelContext ctx("linear", "bench", &attrs, &pool);
    ctx.inputs.resize(2);
    ctx.inputs[0] = {true, x.data.data(), DType::F32, {m, w.k}, "x"};
    ctx.inputs[1] = {true, bytes.data(), w.f.dt, {w.n, w.k}, "w"};
    ctx.inputs[1].groupSize = isQuantDType(w.f.dt) ? w.group() : 0;
    ctx.inputs[1].layout = w.f.q16 ? "q16" : "row-major";
    cpu::KernelOutput o;
    o.data = y.data();
    o.capacityBytes = m * w.n * 4;
    ctx.outputs.push_back(o);
    EXPECT_TRUE(cpu::findKernel("linear")->fn(ctx).isOk());
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
             .count() /
         double(w.copies.size());
}

TEST(LlmBench, QuantLinearBandwidth) {
  ThreadPool pool(std::getenv("INGOT_BENCH_THREADS")
                      ? std::atoi(std::getenv("INGOT_BENCH_THREADS"))
                      : 2);
  const int rounds = std::getenv("INGOT_BENCH_ROUNDS")
                         ? std::atoi(std::getenv("INGOT_BENCH_ROUNDS"))
                         : 7;
  const Format formats[] = {{DType::F32, 0},        {DType::BF16, 0},
                            {DType::Q8, 32},        {DType::Q4, 32},
                            {DType::Q4M, 32},       {DType::F8E4M3, 0},
                            {DType::Q8, 32, true},  {DType::Q4, 32, true},
                            {DType::Q4M, 32, true}, {DType::Q8, 0, true}};
  const std::pair<int64_t, int64_t> shapes[] = {
      {1536, 576}, {576, 1536}, {49152, 576}};
  const int64_t ms[] = {1, 4, 32, 128};
  std::vector<std::unique_ptr<Weights>> ws;
  for (const Format &f : formats)
    for (auto [n, k] : shapes)
      ws.push_back(std::make_unique<Weights>(f, n, k));
  Rng rng(5);
  std::vector<Tensor> xs;
  for (int64_t m : ms)
    xs.push_back(rng.uniform({m, 1536}));
  std::vector<float> y(size_t(128 * 49152));
  std::vector<double> best(ws.size() * std::size(ms), 1e30);
  Ceilings ceil;
  for (int round = 0; round < rounds; ++round) {
    const Ceilings c = probeCeilings(pool, 0.2);
    ceil.readGBps = std::max(ceil.readGBps, c.readGBps);
    ceil.peakGflops = std::max(ceil.peakGflops, c.peakGflops);
    for (size_t i = 0; i < ws.size(); ++i)
      for (size_t j = 0; j < std::size(ms); ++j) {
        Tensor x = xs[j];
        x.shape = {ms[j], ws[i]->k};
        best[i * std::size(ms) + j] =
            std::min(best[i * std::size(ms) + j], runOnce(*ws[i], ms[j], x, y, pool));
      }
  }
  std::printf("probe (%d threads): read %.1f GB/s, f32 peak %.1f GFLOP/s\n",
              int(pool.size()), ceil.readGBps, ceil.peakGflops);
  std::printf("%-11s %-11s %5s | %9s %6s %9s | %s\n", "format", "K->N", "m",
              "us/call", "GB/s", "GFLOP/s", "% of read bw / % of peak");
  for (size_t i = 0; i < ws.size(); ++i)
    for (size_t j = 0; j < std::size(ms); ++j) {
      const Weights &w = *ws[i];
      const double s = best[i * std::size(ms) + j];
      const double gbs = double(w.bytesPerCopy) / s / 1e9;
      const double gflops = 2.0 * double(ms[j] * w.n * w.k) / s / 1e9;
      const std::string shape = std::to_string(w.k) + "->" + std::to_string(w.n);
      const std::string name =
          std::string(dtypeName(w.f.dt)) + (w.f.q16 ? "/q16" : "") +
          (isQuantDType(w.f.dt) && w.f.group == 0 ? "/ch" : "");
      std::printf("%-11s %-11s %5lld | %9.1f %6.1f %9.1f | %5.0f%% / %5.1f%%\n",
                  name.c_str(), shape.c_str(), (long long)ms[j], s * 1e6, gbs,
                  gflops, 100 * gbs / ceil.readGBps,
                  100 * gflops / ceil.peakGflops);
    }
}

} // namespace
