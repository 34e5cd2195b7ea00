//===- GemmTest.cpp - sgemm micro-kernels, matmul and gemm kernels --------===//
//
// References are naive triple loops in double. The error of an f32 dot
// product of length K is bounded by ~K * 2^-24 * sum|a_k b_k|; blocked
// summation does much better in practice, so each element is checked to
// within 2e-6 * sum|a_k b_k| (about 30 ulps of that magnitude, ~1000x below
// what a wrong index or a dropped K-block produces).
//
//===----------------------------------------------------------------------===//

#include "IsaTestUtil.h"
#include "KernelTestUtil.h"

#include "cpu/Gemm.h"
#include "cpu/StepCache.h"

using namespace ingot;
using namespace ingot::test;

namespace {

constexpr double kRtol = 2e-6;

struct GemmCase {
  int64_t m, n, k;
  bool transA, transB;
  float alpha, beta;
};

/// C = alpha op(A) op(B) + beta C with strided (padded) A, B and C.
void checkSgemm(cpu::GemmIsa isa, const GemmCase &gc, ThreadPool *pool,
                uint64_t seed) {
  Rng rng(seed);
  const int64_t ar = gc.transA ? gc.k : gc.m, ac = gc.transA ? gc.m : gc.k;
  const int64_t br = gc.transB ? gc.n : gc.k, bc = gc.transB ? gc.k : gc.n;
  const int64_t lda = ac + 3, ldb = bc + 5, ldc = gc.n + 1;
  Tensor a = rng.uniform({std::max<int64_t>(ar, 1), lda});
  Tensor b = rng.uniform({std::max<int64_t>(br, 1), ldb});
  Tensor c = rng.uniform({std::max<int64_t>(gc.m, 1), ldc});
  std::vector<float> c0(ptr<float>(c), ptr<float>(c) + c.data.size() / 4);
  if (gc.beta == 0.0f) // must not be read: poison it
    for (int64_t i = 0; i < gc.m * ldc; ++i)
      ptr<float>(c)[i] = std::numeric_limits<float>::quiet_NaN();
  auto A = [&](int64_t i, int64_t p) {
    return double(gc.transA ? ptr<float>(a)[p * lda + i]
                            : ptr<float>(a)[i * lda + p]);
  };
  auto B = [&](int64_t p, int64_t j) {
    return double(gc.transB ? ptr<float>(b)[j * ldb + p]
                            : ptr<float>(b)[p * ldb + j]);
  };
  cpu::GemmArgs g;
  g.m = gc.m;
  g.n = gc.n;
  g.k = gc.k;
  g.a = ptr<float>(a);
  g.lda = lda;
  g.transA = gc.transA;
  g.b = ptr<float>(b);
  g.ldb = ldb;
  g.transB = gc.transB;
  g.c = ptr<float>(c);
  g.ldc = ldc;
  g.alpha = gc.alpha;
  g.beta = gc.beta;
  // B packed ahead (a weight's panels): the same sums in the same order.
  Tensor cPacked = c;
  cpu::GemmArgs gp = g;
  gp.c = ptr<float>(cPacked);
  cpu::sgemm(gp, pool, cpu::PackedB(g, isa));
  cpu::sgemm(g, pool, isa);
  ASSERT_EQ(cPacked.data, c.data)
      << "prepacked B differs: " << cpu::gemmIsaName(isa) << " m=" << gc.m
      << " n=" << gc.n << " k=" << gc.k;
  for (int64_t i = 0; i < gc.m; ++i)
    for (int64_t j = 0; j < gc.n; ++j) {
      double s = 0, mag = 0;
      for (int64_t p = 0; p < gc.k; ++p) {
        s += A(i, p) * B(p, j);
        mag += std::fabs(A(i, p) * B(p, j));
      }
      double want =
          gc.alpha * s + (gc.beta != 0.0f ? gc.beta * c0[i * ldc + j] : 0.0);
      double bound = kRtol * (std::fabs(gc.alpha) * mag +
                              std::fabs(gc.beta * c0[i * ldc + j])) +
                     1e-30;
      float got = ptr<float>(c)[i * ldc + j];
      ASSERT_LE(std::fabs(got - want), bound)
          << cpu::gemmIsaName(isa) << " m=" << gc.m << " n=" << gc.n
          << " k=" << gc.k << " tA=" << gc.transA << " tB=" << gc.transB
          << " at (" << i << "," << j << "): got " << got << " want " << want;
    }
  // Padding columns of C are untouched.
  for (int64_t i = 0; i < gc.m; ++i) {
    if (gc.beta != 0.0f) {
      ASSERT_EQ(ptr<float>(c)[i * ldc + gc.n], c0[i * ldc + gc.n]);
    }
  }
}

TEST(Gemm, AllIsasAllShapes) {
  const std::vector<GemmCase> cases = {
      {1, 1, 1, false, false, 1, 0},
      {5, 7, 3, false, false, 1, 0},
      {6, 16, 256, false, false, 1, 0},
      {12, 32, 257, false, false, 1, 0},
      {17, 33, 65, true, false, 1, 0},
      {17, 33, 65, false, true, 1, 0},
      {17, 33, 65, true, true, 0.5, 2},
      {100, 300, 257, false, false, 1, 1},
      {145, 70, 513, false, true, -1, 0},
      {13, 2100, 40, false, false, 1, 0.5},
      // Last row tiles of 4 and 8 rows (AVX-512 computes only those).
      {16, 45, 70, false, false, 1, 0},
      {20, 33, 129, true, false, 1, 0.5},
      {8, 64, 31, false, true, 2, 0},
      // m <= 4 runs the unpacked small-M path.
      {1, 1000, 300, false, false, 1, 0},
      {3, 77, 129, true, false, 2, 1},
      {4, 65, 1025, false, true, 1, 0},
      {2, 5, 7, true, true, 1, -1},
      {1, 13, 3, false, false, 1, 0},
      // Degenerate: k == 0 scales C by beta.
      {7, 9, 0, false, false, 1, 0.5},
  };
  uint64_t seed = 301;
  for (cpu::GemmIsa isa : supportedIsas())
    for (const GemmCase &gc : cases) {
      checkSgemm(isa, gc, nullptr, seed++);
      checkSgemm(isa, gc, &testPool(), seed++);
    }
}

TEST(Gemm, LargeThreaded) {
  // Crosses every cache block (KC=256, MC=144, NC=2048) on the best ISA.
  checkSgemm(cpu::bestGemmIsa(), {300, 2100, 600, false, false, 1, 0},
             &testPool(), 350);
  if (cpu::gemmIsaSupported(cpu::GemmIsa::Avx2))
    checkSgemm(cpu::GemmIsa::Avx2, {257, 519, 300, false, true, 1, 0},
               &testPool(), 351);
}

/// numpy matmul reference with batch broadcasting and 1-D promotion.
void checkMatmul(Rng &rng, const Shape &sa, const Shape &sb, int alias = -1) {
  Tensor a = rng.uniform(sa), b = rng.uniform(sb);
  Shape pa = sa.size() == 1 ? Shape{1, sa[0]} : sa;
  Shape pb = sb.size() == 1 ? Shape{sb[0], 1} : sb;
  const int64_t m = pa[pa.size() - 2], k = pa.back(), n = pb.back();
  Shape ba(pa.begin(), pa.end() - 2), bb(pb.begin(), pb.end() - 2);
  Shape batch = broadcastShape(ba, bb);
  Shape so = batch;
  if (sa.size() > 1)
    so.push_back(m);
  if (sb.size() > 1)
    so.push_back(n);
  std::vector<double> ref, mag;
  for (int64_t bi = 0; bi < count(batch); ++bi) {
    auto idx = unravel(bi, batch);
    const float *ap = ptr<float>(a) + broadcastIndex(idx, ba) * m * k;
    const float *bp = ptr<float>(b) + broadcastIndex(idx, bb) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, g = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += double(ap[i * k + p]) * bp[p * n + j];
          g += std::fabs(double(ap[i * k + p]) * bp[p * n + j]);
        }
        ref.push_back(s);
        mag.push_back(g);
      }
  }
  SCOPED_TRACE(shape::toString(sa) + " @ " + shape::toString(sb));
  Call c{"matmul", {&a, &b}};
  c.aliasInput = alias;
  expectClose(runOk(c), so, ref, kRtol, 1e-30, &mag);
}

TEST(Gemm, MatMulKernel) {
  Rng rng(360);
  checkMatmul(rng, {3, 4}, {4, 5});
  checkMatmul(rng, {4}, {4, 5});
  checkMatmul(rng, {3, 4}, {4});
  checkMatmul(rng, {4}, {4});
  checkMatmul(rng, {2, 3, 4}, {4, 5}); // folds into one tall GEMM
  checkMatmul(rng, {2, 3, 4}, {2, 4, 5});
  checkMatmul(rng, {7, 1, 3, 4}, {5, 4, 2}); // batch broadcast both ways
  checkMatmul(rng, {2, 4}, {6, 4, 3});
  checkMatmul(rng, {130, 257}, {257, 190}); // threaded, odd tiles
  checkMatmul(rng, {1, 1000}, {1000, 515}); // decode-like GEMV
  checkMatmul(rng, {3, 70}, {70, 1});
  checkMatmul(rng, {16, 33, 20}, {16, 20, 40}); // parallel over batches
  checkMatmul(rng, {2, 8, 64, 48}, {2, 8, 48, 64});
  checkMatmul(rng, {0, 4}, {4, 5});
  checkMatmul(rng, {3, 0}, {0, 5}); // K == 0 gives zeros

  Tensor a = rng.uniform({3, 4}), b = rng.uniform({5, 6});
  std::vector<Tensor> outs;
  Status s = runKernel({"matmul", {&a, &b}}, &outs);
  EXPECT_NE(s.message().find("[3,4]"), std::string::npos) << s.message();
  Tensor ints = i64({2, 2}, {1, 2, 3, 4});
  EXPECT_FALSE(
      runKernel({"matmul", {&ints, &ints}, {}, {DType::I64}}, &outs).isOk());
}

TEST(Gemm, GemmKernel) {
  Rng rng(370);
  const int64_t m = 37, n = 45, k = 29;
  for (int tA : {0, 1})
    for (int tB : {0, 1})
      for (Shape cs : {Shape{}, Shape{n}, Shape{m, 1}, Shape{m, n}, Shape{1}})
        for (bool withC : {true, false}) {
          Tensor a = rng.uniform(tA ? Shape{k, m} : Shape{m, k});
          Tensor b = rng.uniform(tB ? Shape{n, k} : Shape{k, n});
          Tensor c = rng.uniform(cs);
          const double alpha = 0.75, beta = withC ? -1.25 : 1.0;
          std::vector<double> ref(m * n), mag(m * n);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double s = 0, g = 0;
              for (int64_t p = 0; p < k; ++p) {
                double av =
                    tA ? ptr<float>(a)[p * m + i] : ptr<float>(a)[i * k + p];
                double bv =
                    tB ? ptr<float>(b)[j * k + p] : ptr<float>(b)[p * n + j];
                s += av * bv;
                g += std::fabs(av * bv);
              }
              double cv =
                  withC ? ptr<float>(c)[broadcastIndex({i, j}, cs)] : 0.0;
              ref[i * n + j] = alpha * s + beta * cv;
              mag[i * n + j] = alpha * g + std::fabs(beta * cv);
            }
          Call call{"gemm",
                    {&a, &b},
                    {floatAttr("alpha", alpha), floatAttr("beta", beta),
                     intAttr("transA", tA), intAttr("transB", tB)}};
          if (withC)
            call.inputs.push_back(&c);
          SCOPED_TRACE("tA=" + std::to_string(tA) +
                       " tB=" + std::to_string(tB) + " C" +
                       shape::toString(cs) + (withC ? "" : " absent"));
          Tensor plain = runOk(call);
          expectClose(plain, {m, n}, ref, kRtol, 1e-30, &mag);
          // B as a weight: packed into the step's cache on the first run
          // and reused on the second, bit for bit the same result.
          cpu::StepCache cache;
          call.constants = {false, true};
          call.stepCache = &cache;
          EXPECT_EQ(runOk(call).data, plain.data);
          EXPECT_EQ(runOk(call).data, plain.data);
        }
  // Defaults: alpha = beta = 1, no transposes.
  Tensor a = rng.uniform({2, 3}), b = rng.uniform({3, 4}), c = rng.uniform({4});
  Tensor out = runOk({"gemm", {&a, &b, &c}});
  double want = ptr<float>(c)[1];
  for (int p = 0; p < 3; ++p)
    want += double(ptr<float>(a)[p]) * ptr<float>(b)[p * 4 + 1];
  EXPECT_NEAR(ptr<float>(out)[1], want, 1e-5);
  Tensor badC = rng.uniform({3});
  std::vector<Tensor> outs;
  EXPECT_FALSE(runKernel({"gemm", {&a, &b, &badC}}, &outs).isOk());
}

TEST(Gemm, StepCacheRepacksForAnotherWeight) {
  // One step's cache fed two weights in turn (as a cache shared by
  // mistake, or a plan whose weight changed) must never serve stale panels.
  Rng rng(380);
  Tensor a = rng.uniform({40, 50});
  Tensor b1 = rng.uniform({50, 70}), b2 = rng.uniform({50, 70});
  cpu::StepCache cache;
  for (const Tensor *b : {&b1, &b2, &b1}) {
    Call plain{"matmul", {&a, b}};
    Tensor want = runOk(plain);
    Call cached = plain;
    cached.constants = {false, true};
    cached.stepCache = &cache;
    EXPECT_EQ(runOk(cached).data, want.data);
  }
}

} // namespace
