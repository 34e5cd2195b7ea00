//===- MatMul.cpp - matmul and gemm kernels -------------------------------===//
//
// Shape handling on top of sgemm (Gemm.h): numpy matmul with 1-D promotion
// and batch broadcasting, and ONNX Gemm with transposes and a broadcast C.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"
#include "cpu/StepCache.h"

#include "ingot/ThreadPool.h"

namespace ingot::cpu {
namespace {

/// Below this many multiply-adds per matrix, batches run in parallel with a
/// serial GEMM each rather than one after another with a threaded GEMM.
constexpr int64_t kSmallGemmWork = 1 << 21;

/// C = op(A) op(B), with op(B) packed once and kept in the step's cache
/// when B is a weight: repacking it on every call cost as much as the
/// multiply for an encoder's few dozen rows. Few-row calls stream B
/// unpacked and need no panels.
void gemmWithWeights(const KernelContext &ctx, const KernelInput &b,
                     const GemmArgs &g) {
  if (!b.constant || !ctx.stepCache() || g.m <= kSmallM) {
    sgemm(g, ctx.pool());
    return;
  }
  const GemmIsa isa = bestGemmIsa();
  // Everything the panels depend on, so another B or shape repacks.
  const uint64_t key =
      stepCacheKey(g.b, {uint64_t(g.k), uint64_t(g.n), uint64_t(g.ldb),
                         uint64_t(g.transB), uint64_t(isa)});
  std::shared_ptr<const PackedB> packed =
      ctx.stepCache()->get<PackedB>(key, [&] { return PackedB(g, isa); });
  sgemm(g, ctx.pool(), *packed);
}

Status matmulKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &a = ctx.input(0), &b = ctx.input(1);
  shape::Shape outShape;
  std::string err;
  if (!shape::matmul(a.shape, b.shape, &outShape, &err))
    return ctx.error(err);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;

  // Promote 1-D operands as numpy does; the output layout is unaffected.
  shape::Shape pa = a.shape.size() == 1 ? shape::Shape{1, a.shape[0]} : a.shape;
  shape::Shape pb = b.shape.size() == 1 ? shape::Shape{b.shape[0], 1} : b.shape;
  const int64_t m = pa[pa.size() - 2], k = pa.back(), n = pb.back();
  const shape::Shape batchA(pa.begin(), pa.end() - 2);
  const shape::Shape batchB(pb.begin(), pb.end() - 2);
  shape::Shape batch;
  shape::broadcast({batchA, batchB}, &batch, nullptr);
  const int64_t batches = shape::numElements(batch);
  float *out = ctx.output(0).as<float>();
  if (batches == 0 || m == 0 || n == 0)
    return Status::ok();

  GemmArgs g;
  g.k = k;
  g.n = n;
  g.b = b.as<float>();
  g.ldb = n;
  g.ldc = n;
  g.a = a.as<float>();
  g.lda = k;
  // B shared by every batch and A's batches contiguous: one tall GEMM.
  if (shape::numElements(batchB) == 1 &&
      shape::numElements(batchA) == batches) {
    g.m = batches * m;
    g.c = out;
    gemmWithWeights(ctx, b, g);
    return Status::ok();
  }

  // Batch offsets through a broadcast plan over the batch dims (rank >= 1).
  shape::Shape batchShape = batch.empty() ? shape::Shape{1} : batch;
  shape::Shape ba = batchA, bb = batchB;
  BroadcastPlan plan;
  if (!makeBroadcastPlan(batchShape, {&ba, &bb}, &plan))
    return ctx.error("batch rank " + std::to_string(batch.size()) +
                     " is above the supported " + std::to_string(kMaxRank));
  std::vector<int64_t> offA(batches), offB(batches);
  int64_t pos = 0;
  const int last = plan.rank - 1;
  forEachRun(plan, 0, batches, [&](const int64_t *off, int64_t cnt) {
    for (int64_t i = 0; i < cnt; ++i, ++pos) {
      offA[pos] = (off[0] + i * plan.strides[0][last]) * m * k;
      offB[pos] = (off[1] + i * plan.strides[1][last]) * k * n;
    }
  });
  const bool parallelBatches =
      m * n * k < kSmallGemmWork ||
      (ctx.pool() && batches >= int64_t(ctx.pool()->size()) * 2);
  auto runBatch = [&](int64_t bi) {
    GemmArgs gb = g;
    gb.m = m;
    gb.a = g.a + offA[bi];
    gb.b = g.b + offB[bi];
    gb.c = out + bi * m * n;
    sgemm(gb, ctx.pool()); // serial when called inside parallelFor
  };
  if (parallelBatches) {
    int64_t grain =
        std::max<int64_t>(1, kSmallGemmWork / std::max<int64_t>(m * n * k, 1));
    ctx.parallelFor(batches, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi)
        runBatch(bi);
    });
  } else {
    for (int64_t bi = 0; bi < batches; ++bi)
      runBatch(bi);
  }
  return Status::ok();
}

Status gemmKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 3, 1); !s)
    return s;
  if (Status s = ctx.expectInputsDType({DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  double alpha, beta;
  int64_t transA, transB;
  if (Status s = ctx.attrFloat("alpha", &alpha, 1.0); !s)
    return s;
  if (Status s = ctx.attrFloat("beta", &beta, 1.0); !s)
    return s;
  if (Status s = ctx.attrInt("transA", &transA, 0); !s)
    return s;
  if (Status s = ctx.attrInt("transB", &transB, 0); !s)
    return s;
  const KernelInput &a = ctx.input(0), &b = ctx.input(1);
  const KernelInput *c = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  shape::Shape outShape;
  std::string err;
  if (!shape::gemm(a.shape, b.shape, c ? &c->shape : nullptr, transA != 0,
                   transB != 0, &outShape, &err))
    return ctx.error(err);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  const int64_t m = outShape[0], n = outShape[1];
  float *out = ctx.output(0).as<float>();
  GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = transA ? a.shape[0] : a.shape[1];
  g.a = a.as<float>();
  g.lda = a.shape[1];
  g.transA = transA != 0;
  g.b = b.as<float>();
  g.ldb = b.shape[1];
  g.transB = transB != 0;
  g.c = out;
  g.ldc = n;
  g.alpha = float(alpha);
  g.beta = 0.0f;
  if (c && beta != 0.0 && m * n > 0) {
    // Materialise C broadcast to (M, N) in the output, then accumulate.
    shape::Shape cs = c->shape;
    BroadcastPlan plan;
    makeBroadcastPlan(outShape, {&cs, &outShape}, &plan);
    const float *cp = c->as<float>();
    const int last = plan.rank - 1;
    forEachRun(plan, 0, plan.total, [&](const int64_t *off, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i)
        out[off[1] + i] = cp[off[0] + i * plan.strides[0][last]];
    });
    g.beta = float(beta);
  }
  gemmWithWeights(ctx, b, g);
  return Status::ok();
}

} // namespace

void addMatMulKernels(std::vector<KernelImpl> &table) {
  table.push_back({"matmul", matmulKernel});
  table.push_back({"gemm", gemmKernel});
}

} // namespace ingot::cpu
