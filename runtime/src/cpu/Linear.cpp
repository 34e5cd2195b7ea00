//===- Linear.cpp - The linear kernel: y = x·Wᵀ + b
//------------------------===//
//
// Two regimes. Decode (few rows of x; Linear.h has the limits) is bound by
// the bandwidth of reading W: the decode kernels stream W once for all
// rows, split over output features across the pool. Prefill is
// compute-bound and goes to the blocked sgemm: f32 weights directly ("nk"
// as a transposed B), f16/bf16 weights a column slice at a time, widened
// to f32 in a scratch panel that the GEMM then packs; widening costs O(NK)
// against the GEMM's O(MNK).
//
//===----------------------------------------------------------------------===//

#include "cpu/Linear.h"
#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"

#include "ingot/ThreadPool.h"

#include <algorithm>
#include <vector>

namespace ingot::cpu {
namespace {

/// Floats of widened weights per prefill slice (4 MiB, within L3).
constexpr int64_t kPrefillSliceFloats = int64_t(1) << 20;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Grown-only scratch for the widened weight slice of the prefill path.
thread_local std::vector<float> tlsWidened;

void runDecode(const KernelContext &ctx, const LinearDecodeArgs &a, bool nk,
               const LinearKernelSet &ks) {
  const int64_t threads = ctx.pool() ? ctx.pool()->size() : 1;
  if (nk) {
    // Blocks of 8 output features keep the kernels' NB-row tiles whole;
    // a chunk should hold at least ~64 KiB of weights to be worth a thread.
    constexpr int64_t kBlock = 8;
    const int64_t rowBytes = std::max<int64_t>(1, a.k * dtypeSize(a.wType));
    const int64_t grain =
        std::max<int64_t>(1, ceilDiv(65536, rowBytes * kBlock));
    ctx.parallelFor(ceilDiv(a.n, kBlock), grain, [&](int64_t b, int64_t e) {
      ks.nk(a, b * kBlock, std::min(a.n, e * kBlock));
    });
    return;
  }
  // Column chunks: multiples of 64 so every row segment is whole cache
  // lines, at most what the L1 accumulators hold, and the same number per
  // thread (the longest thread sets the time).
  const int64_t maxWidth = linearKnMaxWidth(a.m);
  const int64_t rounds = ceilDiv(ceilDiv(a.n, threads), maxWidth);
  const int64_t width = std::clamp<int64_t>(
      ceilDiv(ceilDiv(a.n, threads * rounds), 64) * 64, 64, maxWidth);
  const int64_t chunks = ceilDiv(a.n, width);
  const int64_t grain = std::max<int64_t>(
      1, 65536 / std::max<int64_t>(1, a.k * width * dtypeSize(a.wType)));
  ctx.parallelFor(chunks, grain, [&](int64_t b, int64_t e) {
    ks.kn(a, b * width, std::min(a.n, e * width));
  });
}

void runPrefill(const KernelContext &ctx, const LinearDecodeArgs &a, bool nk,
                const LinearKernelSet &ks) {
  const int64_t m = a.m, n = a.n, k = a.k;
  if (a.bias)
    for (int64_t r = 0; r < m; ++r)
      std::copy(a.bias, a.bias + n, a.y + r * n);
  GemmArgs g;
  g.m = m;
  g.k = k;
  g.a = a.x;
  g.lda = k;
  g.ldc = n;
  g.beta = a.bias ? 1.0f : 0.0f;
  if (a.wType == DType::F32) {
    g.n = n;
    g.b = static_cast<const float *>(a.w);
    g.ldb = nk ? k : n;
    g.transB = nk;
    g.c = a.y;
    sgemm(g, ctx.pool());
    return;
  }
  const int64_t slice = std::clamp<int64_t>(
      kPrefillSliceFloats / std::max<int64_t>(k, 1) / 64 * 64, 64, n);
  std::vector<float> &buf = tlsWidened;
  buf.resize(size_t(slice * k));
  const auto *w = static_cast<const uint8_t *>(a.w);
  const size_t esz = dtypeSize(a.wType);
  for (int64_t j0 = 0; j0 < n; j0 += slice) {
    const int64_t nc = std::min(slice, n - j0);
    float *dst = buf.data();
    if (nk) {
      // Rows [j0, j0 + nc) of W are contiguous: widen them as one run.
      ctx.parallelFor(nc, std::max<int64_t>(1, 16384 / std::max<int64_t>(k, 1)),
                      [&](int64_t b, int64_t e) {
                        ks.widen(a.wType, w + (j0 + b) * k * esz, (e - b) * k,
                                 dst + b * k);
                      });
    } else {
      ctx.parallelFor(
          k, std::max<int64_t>(1, 16384 / nc), [&](int64_t b, int64_t e) {
            for (int64_t kk = b; kk < e; ++kk)
              ks.widen(a.wType, w + (kk * n + j0) * esz, nc, dst + kk * nc);
          });
    }
    g.n = nc;
    g.b = dst;
    g.ldb = nk ? k : nc;
    g.transB = nk;
    g.c = a.y + j0;
    sgemm(g, ctx.pool());
  }
}

Status linearKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 3, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i))
      if (Status s =
              ctx.expectInputDType(i, {DType::F32, DType::F16, DType::BF16});
          !s)
        return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  std::string layout;
  if (Status s = ctx.attrStr("w_layout", &layout, std::string("nk")); !s)
    return s;
  if (layout != "nk" && layout != "kn")
    return ctx.error("w_layout must be \"nk\" or \"kn\", got \"" + layout +
                     "\"");
  const bool nk = layout == "nk";
  const KernelInput &x = ctx.input(0), &w = ctx.input(1);
  if (x.shape.empty())
    return ctx.error("input 'x' must have rank >= 1, got a scalar");
  if (w.shape.size() != 2)
    return ctx.error("weight '" + w.name + "' must be 2-D, got shape " +
                     shape::toString(w.shape));
  const int64_t k = x.shape.back();
  const int64_t n = nk ? w.shape[0] : w.shape[1];
  const int64_t wk = nk ? w.shape[1] : w.shape[0];
  if (wk != k)
    return ctx.error("x " + shape::toString(x.shape) + " has " +
                     std::to_string(k) + " features but weight '" + w.name +
                     "' " + shape::toString(w.shape) + " (layout " + layout +
                     ") expects " + std::to_string(wk));
  const KernelInput *bias = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  if (bias && (bias->shape.size() != 1 || bias->shape[0] != n))
    return ctx.error("bias '" + bias->name + "' must have shape [" +
                     std::to_string(n) + "], got " +
                     shape::toString(bias->shape));
  shape::Shape outShape = x.shape;
  outShape.back() = n;
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  const int64_t m = dimProduct(x.shape, 0, x.shape.size() - 1);
  float *y = ctx.output(0).as<float>();
  if (m == 0 || n == 0)
    return Status::ok();

  const LinearKernelSet &ks = bestLinearKernels();
  std::vector<float> biasF32;
  if (bias) {
    biasF32.resize(n);
    ks.widen(bias->dtype, bias->data, n, biasF32.data());
  }
  LinearDecodeArgs a;
  a.m = m;
  a.n = n;
  a.k = k;
  a.x = x.as<float>();
  a.w = w.data;
  a.wType = w.dtype;
  a.bias = bias ? biasF32.data() : nullptr;
  a.y = y;
  if (k == 0) {
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j)
        y[r * n + j] = a.bias ? a.bias[j] : 0.0f;
    return Status::ok();
  }
  if (m <= (nk ? kLinearNkMaxRows : kLinearKnMaxRows))
    runDecode(ctx, a, nk, ks);
  else
    runPrefill(ctx, a, nk, ks);
  return Status::ok();
}

} // namespace

void addLinearKernels(std::vector<KernelInfo> &table) {
  table.push_back({"linear", linearKernel, false});
}

} // namespace ingot::cpu
