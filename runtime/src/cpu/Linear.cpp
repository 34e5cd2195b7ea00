//===- Linear.cpp - The linear kernel: y = x W^T + b ----------------------===//
//
// Batch invariance: a row's output must be bitwise the same whatever the
// other rows of the step are, how many there are, and how many threads
// run, so that a request's greedy tokens do not change when the serving
// engine batches it with others. Every row therefore goes through the same
// per-output-element kernel, the "nk"/"kn" kernels of Linear.h, for any
// number of rows: each output element is one dot product whose summation
// order depends only on K ("nk": fixed vector lanes over K, a fixed lane
// reduction, a scalar K tail; "kn": FMAs in K order, with the columns past
// N rounded down to a vector step done scalar), never on M, the row's
// place or the split over threads. Hence column chunks start at multiples
// of 64, and the "kn" register-tiled kernel for many rows (knMany) repeats
// the plain kernel's operations exactly. The blocked sgemm, whose order
// depends on its M blocking, is no longer used here.
//
// Decode (few rows) is bound by reading W: the kernels stream it once for
// all rows. With many rows (prefill) the same kernels run on tiles that
// keep a panel of weight rows in L2 while row groups of x pass over it;
// the tiling changes only which loop is outer, not any element's sum.
//
// The epilogue y = act(x·Wᵀ + b) + residual runs on each column chunk right
// after its dot products, while the chunk is in L1/L2 (the bias is added by
// the dot-product kernels). The activations are the separate kernels' own
// functions (gelu: cpu/Activation.h, silu: x·sigmoidF32(x) as silu_mul,
// relu as the relu kernel), elementwise, so fused and unfused agree
// bitwise. y may be the residual's own memory: a chunk's residual is saved
// before its dot products overwrite it.
//
// "nk16" weights (WeightLayout.h) go through the same "nk" kernels, which
// read each 16-row panel as one stream; column chunks then start at panel
// boundaries.
//
//===----------------------------------------------------------------------===//

#include "cpu/Linear.h"
#include "cpu/KernelUtil.h"
#include "cpu/LinearBlocks.h"
#include "cpu/LinearQ16.h"
#include "cpu/StepCache.h"

#include "ingot/Quant.h"
#include "ingot/ThreadPool.h"
#include "ingot/WeightLayout.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

namespace ingot::cpu {
namespace {

using namespace linear;

/// Rows of x per call of the "nk" kernel when there are many: the kernels
/// re-read a weight block from L1 for every 4 rows, and 32 rows of x (at
/// most a few hundred KiB) stay in L2 across the panel.
constexpr int64_t kNkRowGroup = kLinearNkMaxRows;

/// Bytes of weights per "kn" column chunk when several row groups pass
/// over it.
constexpr int64_t kKnPanelBytes = 256 * 1024;

void runNk(const KernelContext &ctx, const LinearDecodeArgs &a,
           const LinearKernelSet &ks, const Epilogue &ep) {
  // Blocks of 8 output features keep the kernels' NB-row tiles whole (16,
  // a whole panel, for "nk16").
  const int64_t block = a.nk16 ? kNk16PanelRows : 8;
  forNkBlocks(ctx, a, block, a.k * int64_t(dtypeSize(a.wType)), kNkRowGroup,
              ep, [&](int64_t r, int64_t rows, int64_t j, int64_t j1) {
                ks.nk(rows == a.m ? a : rowSlice(a, r, rows), j, j1);
              });
}

/// Bytes of packed "kn" panels the process keeps, each a f32 copy of its
/// weight: past this budget weights are packed per call again. 64 MiB
/// holds a MiniLM's (21 MiB) and bounds what an ONNX LLM's prefill adds.
constexpr size_t kKnPanelBudget = size_t(64) << 20;
std::atomic<size_t> knPanelBytesHeld{0};

/// A weight's packed panels, or none when the budget was spent; their
/// bytes go back to the budget when the step's cache drops them.
struct HeldKnPanels {
  AlignedFloats panels;
  size_t bytes = 0;

  HeldKnPanels() = default;
  HeldKnPanels(AlignedFloats p, size_t b) : panels(std::move(p)), bytes(b) {}
  HeldKnPanels(HeldKnPanels &&o) noexcept
      : panels(std::move(o.panels)), bytes(std::exchange(o.bytes, 0)) {}
  HeldKnPanels &operator=(HeldKnPanels &&) = delete;
  ~HeldKnPanels() { knPanelBytesHeld.fetch_sub(bytes); }
};

HeldKnPanels holdKnPanels(const LinearKernelSet &ks,
                          const LinearDecodeArgs &a) {
  const size_t bytes = size_t(a.k) * size_t(a.n + 32) * sizeof(float);
  if (knPanelBytesHeld.fetch_add(bytes) + bytes > kKnPanelBudget) {
    knPanelBytesHeld.fetch_sub(bytes);
    return {};
  }
  return {ks.packKn(a), bytes};
}

void runKn(KernelContext &ctx, LinearDecodeArgs a, bool weightIsConstant,
           const LinearKernelSet &ks, const Epilogue &ep) {
  const int64_t threads = ctx.pool() ? ctx.pool()->size() : 1;
  // `kn` takes at most kLinearKnMaxRows rows, more go in groups; `knMany`
  // takes them all.
  const bool many = a.m > kLinearKnMaxRows && ks.knMany;
  // A weight's panels are packed once and kept (within kKnPanelBudget):
  // packing them on every call was a sixth of BERT's linears (perf,
  // [128, 384] x [384, 1536]).
  std::shared_ptr<const HeldKnPanels> held;
  if (many && ks.packKn && weightIsConstant && ctx.stepCache()) {
    const uint64_t key =
        stepCacheKey(a.w, {uint64_t(a.k), uint64_t(a.n), uint64_t(a.wType)});
    held = ctx.stepCache()->get<HeldKnPanels>(
        key, [&] { return holdKnPanels(ks, a); });
    if (held->bytes)
      a.knPanels = held->panels.data();
  }
  const int64_t groupRows = std::min(a.m, kLinearKnMaxRows);
  // Column chunks: multiples of 64 starting at multiples of 64, which
  // keeps every column's vector-or-tail treatment (and so its sum) fixed;
  // at most what the L1 accumulators hold, and the same number per thread
  // (the longest thread sets the time).
  // `knMany` packs W a panel at a time and keeps it in L1 for all rows,
  // so its chunks only split the columns evenly over the threads.
  int64_t maxWidth = many ? ceilDiv(a.n, 64) * 64 : linearKnMaxWidth(groupRows);
  // With several row groups, each re-reads its chunk of W: narrow enough
  // to stay in L2 between them.
  if (!many && a.m > groupRows)
    maxWidth = std::clamp<int64_t>(
        kKnPanelBytes / std::max<int64_t>(1, a.k * dtypeSize(a.wType)) / 64 *
            64,
        64, maxWidth);
  const int64_t rounds = ceilDiv(ceilDiv(a.n, threads), maxWidth);
  const int64_t width = std::clamp<int64_t>(
      ceilDiv(ceilDiv(a.n, threads * rounds), 64) * 64, 64, maxWidth);
  const int64_t chunks = ceilDiv(a.n, width);
  if (many && chunks < threads) {
    // Fewer column chunks than threads (Magika's [2048, 257] x [257, 64]
    // ran on one): bands of rows too. Every row's sums are its own, so
    // the bits do not depend on the banding.
    const int64_t bands = ceilDiv(threads, chunks);
    const int64_t bandRows = ceilDiv(ceilDiv(a.m, bands), 16) * 16;
    ctx.parallelFor(chunks * bands, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t c0 = t / bands * width, c1 = std::min(a.n, c0 + width);
        const int64_t r0 = t % bands * bandRows;
        const int64_t r1 = std::min(a.m, r0 + bandRows);
        if (r0 < r1)
          chunkWithEpilogue(ep, a, r0, r1, c0, c1, [&] {
            ks.knMany(rowSlice(a, r0, r1 - r0), c0, c1);
          });
      }
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(
      1, 65536 / std::max<int64_t>(1, a.k * width * dtypeSize(a.wType)));
  ctx.parallelFor(chunks, grain, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t c0 = c * width, c1 = std::min(a.n, (c + 1) * width);
      if (many)
        chunkWithEpilogue(ep, a, 0, a.m, c0, c1, [&] { ks.knMany(a, c0, c1); });
      else
        for (int64_t r = 0; r < a.m; r += groupRows) {
          const int64_t rows = std::min(groupRows, a.m - r);
          chunkWithEpilogue(ep, a, r, r + rows, c0, c1,
                            [&] { ks.kn(rowSlice(a, r, rows), c0, c1); });
        }
    }
  });
}

/// The weight's stored layout is the one w_layout reads: "nk16" and "q16"
/// name their own, "nk" and "kn" read row-major bytes.
Status checkLayoutMatches(KernelContext &ctx, const KernelInput &w,
                          const std::string &layout) {
  const std::string_view want = layout == "nk16" || layout == "q16"
                                    ? std::string_view(layout)
                                    : std::string_view("row-major");
  if (w.layout != want)
    return ctx.error("weight '" + w.name + "' is stored as \"" +
                     std::string(w.layout) + "\" but w_layout \"" + layout +
                     "\" reads \"" + std::string(want) + "\"");
  if (layout == "q16" && w.shape.size() == 2)
    if (std::string why =
            q16Unsupported(w.dtype, w.shape[0], w.shape[1], w.groupSize);
        !why.empty())
      return ctx.error("weight '" + w.name + "': " + why);
  return Status::ok();
}

Status linearKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 4, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectInputDType(1, {DType::F32, DType::F16, DType::BF16,
                                          DType::Q8, DType::Q4, DType::Q4M,
                                          DType::F8E4M3});
      !s)
    return s;
  if (ctx.hasInput(2))
    if (Status s =
            ctx.expectInputDType(2, {DType::F32, DType::F16, DType::BF16});
        !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  std::string layout;
  if (Status s = ctx.attrStr("w_layout", &layout, std::string("nk")); !s)
    return s;
  if (layout != "nk" && layout != "kn" && layout != "nk16" && layout != "q16")
    return ctx.error("w_layout must be \"nk\", \"kn\", \"nk16\" or \"q16\", "
                     "got \"" +
                     layout + "\"");
  const bool nk = layout != "kn";
  Epilogue ep;
  if (Status s = parseActivation(ctx, &ep.act); !s)
    return s;
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
  if (Status s = checkLayoutMatches(ctx, w, layout); !s)
    return s;
  if (isQuantDType(w.dtype) && layout != "q16" &&
      (layout != "nk" || w.groupSize < 1))
    return ctx.error("quantised weight '" + w.name + "' (" +
                     dtypeName(w.dtype) + ", group " +
                     std::to_string(w.groupSize) +
                     ") needs w_layout \"nk\" and a group size >= 1");
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
  std::vector<uint8_t> residualCopy;
  if (ctx.hasInput(3)) {
    const KernelInput &res = ctx.input(3);
    if (Status s = ctx.expectInputDType(3, {DType::F32}); !s)
      return s;
    if (res.shape != outShape)
      return ctx.error("residual '" + res.name + "' must have the output's " +
                       "shape " + shape::toString(outShape) + ", got " +
                       shape::toString(res.shape));
    // Exactly y's memory is fine (saved per chunk); other overlap is
    // copied first.
    ep.residual = static_cast<const float *>(
        detachIfAliased(res, y, size_t(m * n) * sizeof(float), outShape,
                        DType::F32, residualCopy));
    ep.residualIsY = ep.residual == y;
  }
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
  a.nk16 = layout == "nk16";
  if (k == 0) {
    chunkWithEpilogue(ep, a, 0, m, 0, n, [&] {
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j)
          y[r * n + j] = a.bias ? a.bias[j] : 0.0f;
    });
    return Status::ok();
  }
  if (layout == "q16")
    runQ16(ctx, a, w.groupSize, ep);
  else if (isQuantDType(w.dtype))
    runNkQuant(ctx, a, w.groupSize, ep);
  else if (nk)
    runNk(ctx, a, ks, ep);
  else
    runKn(ctx, a, w.constant, ks, ep);
  return Status::ok();
}

} // namespace

void addLinearKernels(std::vector<KernelImpl> &table) {
  table.push_back({"linear", linearKernel});
}

} // namespace ingot::cpu
