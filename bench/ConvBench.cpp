//===- ConvBench.cpp - implicit conv against a plain GEMM ceiling ---------===//
//
// A benchmark, not a test (ctest never runs it): GFLOP/s of the implicit
// conv (ConvImplicit.cpp) on YOLOv8n's conv shapes at 320x320, beside the
// same-sized GEMM (M = out channels, N = output positions, K = C·kh·kw)
// on B packed ahead of time, the best the shared sgemm does with no
// unrolling at all. Interleaved rounds, best round counts. Run it with
//   build/bin/bench-conv   (INGOT_BENCH_THREADS, INGOT_BENCH_ROUNDS,
//                           INGOT_BENCH_SHAPE=a substring of one shape)
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include "cpu/ConvImplicit.h"
#include "cpu/StepCache.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>

using namespace ingot;
using namespace ingot::test;

namespace {

struct Shape2 {
  const char *what;
  int64_t c, h, m, k, s;
};

cpu::Window window(const Shape2 &g) {
  cpu::Window w{};
  for (int d = 0; d < 3; ++d) {
    const bool sp = d > 0;
    w.in[d] = sp ? g.h : 1, w.k[d] = sp ? g.k : 1, w.stride[d] = sp ? g.s : 1;
    w.dil[d] = 1, w.pad[d] = w.padEnd[d] = sp ? g.k / 2 : 0;
    w.out[d] = (w.in[d] + 2 * w.pad[d] - w.k[d]) / w.stride[d] + 1;
  }
  return w;
}

double bestSeconds(const std::function<void()> &fn, int reps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
             .count() /
         reps;
}

int envInt(const char *name, int dflt) {
  const char *v = std::getenv(name);
  return v ? std::atoi(v) : dflt;
}

TEST(ConvBench, ImplicitAgainstGemm) {
  const int threads = envInt("INGOT_BENCH_THREADS", 1);
  const int rounds = envInt("INGOT_BENCH_ROUNDS", 5);
  ThreadPool pool{static_cast<unsigned>(threads)};
  const cpu::GemmIsa isa = cpu::bestGemmIsa();
  if (cpu::implicitKernels(isa).mr == 0)
    GTEST_SKIP() << "no AVX2";
  std::printf("%-26s %9s %9s %7s  (%d threads, %s)\n", "shape", "implicit",
              "gemm", "ratio", threads, cpu::gemmIsaName(isa));
  for (const Shape2 &g : {Shape2{"stem 3->16 s2 @320", 3, 320, 16, 3, 2},
                          Shape2{"16->32 s2 @160", 16, 160, 32, 3, 2},
                          Shape2{"16->16 @80", 16, 80, 16, 3, 1},
                          Shape2{"32->32 @40", 32, 40, 32, 3, 1},
                          Shape2{"64->64 @40", 64, 40, 64, 3, 1},
                          Shape2{"64->64 s2 @40", 64, 40, 64, 3, 2},
                          Shape2{"128->128 @10", 128, 10, 128, 3, 1}}) {
    const char *only = std::getenv("INGOT_BENCH_SHAPE");
    if (only && !std::strstr(g.what, only))
      continue;
    const cpu::Window w = window(g);
    Rng rng(5);
    Tensor x = rng.uniform({g.c, g.h, g.h}),
           wt = rng.uniform({g.m, g.c, g.k, g.k});
    const int64_t kdim = g.c * g.k * g.k, n = w.outSize();
    std::vector<float> y(size_t(g.m * n)), cols(size_t(kdim * n), 0.5f);
    cpu::GemmArgs args;
    args.m = g.m, args.n = n, args.k = kdim;
    args.a = ptr<float>(wt), args.lda = kdim;
    args.b = cols.data(), args.ldb = n;
    args.c = y.data(), args.ldc = n;
    const cpu::PackedB packed(args, isa);
    cpu::StepCache cache;
    const double flops = 2.0 * double(g.m) * double(n) * double(kdim);
    const int reps = std::max<int>(3, int(2e8 / flops));
    double implicitBest = 1e9, gemmBest = 1e9;
    for (int r = 0; r < rounds; ++r) {
      implicitBest = std::min(
          implicitBest,
          bestSeconds(
              [&] {
                cpu::KernelContext ctx("conv", "bench", nullptr, &pool);
                ctx.setStepCache(&cache);
                cpu::implicitConvOn(isa, ctx, w, ptr<float>(x), g.c,
                                    ptr<float>(wt), true, g.m, nullptr,
                                    cpu::ConvActivation{}, y.data());
              },
              reps));
      gemmBest =
          std::min(gemmBest,
                   bestSeconds([&] { cpu::sgemm(args, &pool, packed); }, reps));
    }
    std::printf("%-26s %8.1fG %8.1fG %7.2f\n", g.what,
                flops / implicitBest / 1e9, flops / gemmBest / 1e9,
                gemmBest / implicitBest);
  }
}

} // namespace
