//===- LinearDecodeBench.cpp - Decode bandwidth of linear -----------------===//
//
// A benchmark, not a test (ctest never runs it): prints the GB/s of linear at
// M=1 next to a memory-read probe measured in the same run. Run it with
//   build/bin/bench-linear-decode
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include <chrono>
#include <immintrin.h>

using namespace ingot;
using namespace ingot::test;

namespace {

// --- Measurement, not a test: decode GB/s against a memory-read probe. ---
// The machine may be shared: every case runs once per round, interleaved
// with the others, and the best round counts, so all figures come from the
// quietest moments of the same run.

/// `reps` calls of linear at M=1 per measurement, cycling through `copies`
/// distinct [n, k] weights (copies > 1 defeats the caches).
struct LinearCase {
  LinearCase(std::string label, DType dt, int64_t n, int64_t k, int copies,
             int reps)
      : label(std::move(label)), dt(dt), n(n), k(k), copies(copies),
        reps(reps) {}
  std::string label;
  DType dt;
  int64_t n, k;
  int copies, reps;
  std::vector<Tensor> ws;
  Tensor x;
  std::vector<float> y;
  int next = 0;

  void setUp() {
    Rng rng(510);
    for (int c = 0; c < copies; ++c)
      ws.push_back(makeWeight(rng, dt, {n, k}).t);
    x = rng.uniform({1, k});
    y.resize(n);
  }
  void run(ThreadPool &pool) {
    static const std::vector<Attr> attrs = {strAttr("w_layout", "nk")};
    for (int r = 0; r < reps; ++r) {
      cpu::KernelContext ctx("linear", "bench", &attrs, &pool);
      ctx.inputs.resize(2);
      ctx.inputs[0] = {true, x.data.data(), DType::F32, {1, k}, "x"};
      ctx.inputs[1] = {true, ws[next].data.data(), dt, {n, k}, "w"};
      next = (next + 1) % copies;
      cpu::KernelOutput o;
      o.data = y.data();
      o.capacityBytes = n * 4;
      ctx.outputs.push_back(o);
      ASSERT_TRUE(cpu::findKernel("linear")->fn(ctx).isOk());
    }
  }
  double bytes() const { return double(n * k * dtypeSize(dt)) * reps; }
};

/// Sum of n floats with 8 independent 256-bit accumulators: far more
/// arithmetic throughput than memory can feed, so it measures the read rate.
__attribute__((target("avx2"))) double sumAvx2(const float *x, int64_t n) {
  __m256 acc[8];
  for (__m256 &a : acc)
    a = _mm256_setzero_ps();
  for (int64_t i = 0; i + 64 <= n; i += 64)
    for (int j = 0; j < 8; ++j)
      acc[j] = _mm256_add_ps(acc[j], _mm256_loadu_ps(x + i + 8 * j));
  alignas(32) float lanes[8];
  double total = 0;
  for (__m256 &a : acc) {
    _mm256_store_ps(lanes, a);
    for (float l : lanes)
      total += l;
  }
  return total;
}

TEST(LlmBench, LinearDecodeBandwidth) {
  ASSERT_TRUE(__builtin_cpu_supports("avx2"));
  ThreadPool pool(2);
  const int64_t probeFloats = int64_t(64) << 20; // 256 MiB
  std::vector<float> big(probeFloats, 1.0f);
  double sink = 0;
  auto probe = [&] {
    std::vector<double> part(64, 0.0);
    pool.parallelFor(64, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        part[c] =
            sumAvx2(big.data() + c * (probeFloats / 64), probeFloats / 64);
    });
    for (double v : part)
      sink += v;
  };
  LinearCase cases[] = {
      {"bf16 1536x576 (1.7 MiB), one weight, cache-hot", DType::BF16, 1536, 576,
       1, 200},
      {"bf16 1536x576, 160 weights round-robin, cold", DType::BF16, 1536, 576,
       160, 160},
      {"f32 49152x576 (108 MiB)", DType::F32, 49152, 576, 1, 1},
      {"bf16 49152x576 (54 MiB)", DType::BF16, 49152, 576, 1, 1},
  };
  for (LinearCase &c : cases)
    c.setUp();
  auto seconds = [](const std::function<void()> &fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  double probeBest = 1e30;
  std::vector<double> best(std::size(cases), 1e30);
  for (int round = 0; round < 30; ++round) {
    probeBest = std::min(probeBest, seconds(probe));
    for (size_t i = 0; i < std::size(cases); ++i)
      best[i] = std::min(best[i], seconds([&] { cases[i].run(pool); }));
  }
  std::printf("memory-read probe (sum of 256 MiB, 2 threads): %.1f GB/s\n",
              probeFloats * 4.0 / probeBest / 1e9);
  for (size_t i = 0; i < std::size(cases); ++i)
    std::printf("linear M=1, 2 threads, %s: %.1f GB/s (%.1f us per call)\n",
                cases[i].label.c_str(), cases[i].bytes() / best[i] / 1e9,
                best[i] / cases[i].reps * 1e6);
  std::printf("(sink %g)\n", sink);
}

} // namespace
