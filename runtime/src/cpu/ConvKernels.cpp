//===- ConvKernels.cpp - conv (im2col + sgemm) ----------------------------===//
//
// For each image and group the receptive fields are unrolled into a
// [C/g · kd · kh · kw, od · oh · ow] matrix (zeros where the window hangs
// over the padding) and multiplied by the group's [M/g, C/g · kd · kh · kw]
// weights with the shared sgemm; a 1x1, stride-1, unpadded convolution
// multiplies the input directly, and a depthwise one (C/g = 1) runs direct
// per-channel loops (ConvDepthwise.cpp). The bias and a fused activation
// (`activation`, as linear's) are applied to each block of output positions
// right after its GEMM, while it is in cache. Pooling is in PoolKernels.cpp.
//
//===----------------------------------------------------------------------===//
#include "cpu/ConvImplicit.h"
#include "cpu/ConvWindow.h"
#include "cpu/Gemm.h"
#include "cpu/Im2col.h"
#include "cpu/LinearBlocks.h"
#include "cpu/StepCache.h"

#include <algorithm>
#include <cmath>

namespace ingot::cpu {
namespace {

/// Multiply-adds of one (image, group) GEMM below which the pairs run in
/// parallel rather than one after another with a threaded GEMM each.
constexpr int64_t kSmallConvWork = int64_t(1) << 21;
/// Output positions below which a conv's GEMM runs transposed.
constexpr int64_t kNarrowOutput = 16;

/// What follows the GEMM on each output value: + bias[channel], then the
/// activation (linear's functions, so a fused conv computes the bits the
/// separate kernels would).
struct ConvEpilogue {
  const float *bias = nullptr; // this group's mg values, or null
  ConvActivation act;
  bool any() const { return bias || act.any(); }

  /// Channels [o0, o1) of `yg`, positions [p0, p1) of each.
  void apply(float *yg, int64_t outSize, int64_t o0, int64_t o1, int64_t p0,
             int64_t p1) const {
    for (int64_t o = o0; o < o1; ++o) {
      float *row = yg + o * outSize + p0;
      if (bias)
        for (int64_t p = 0; p < p1 - p0; ++p)
          row[p] += bias[o];
      act.apply(row, p1 - p0);
    }
  }
};

/// A large conv as independent blocks of output positions: each task
/// unrolls its block's receptive fields into a per-thread buffer that
/// stays in cache (a whole im2col matrix of PP-OCR's detector is 88 MB,
/// written serially) and multiplies it by every output channel's weights.
void blockedConv(KernelContext &ctx, const Window &w, const float *xg,
                 const float *wg, int64_t cg, int64_t mg, int64_t block,
                 const ConvEpilogue &ep, float *yg) {
  const int64_t kdim = cg * w.k[0] * w.k[1] * w.k[2], outSize = w.outSize();
  const int64_t blocks = (outSize + block - 1) / block;
  ctx.parallelFor(blocks, 1, [&](int64_t bb, int64_t be) {
    // Past a few rows the block goes straight into packed panels.
    PackedB packed;
    std::vector<float> col;
    if (mg > kSmallM)
      packed = PackedB(kdim, block, bestGemmIsa());
    else
      col.resize(size_t(kdim * block));
    for (int64_t blk = bb; blk < be; ++blk) {
      const int64_t p0 = blk * block, p1 = std::min(outSize, p0 + block);
      GemmArgs args;
      args.m = mg, args.n = p1 - p0, args.k = kdim;
      args.a = wg, args.lda = kdim;
      args.c = yg + p0, args.ldc = outSize;
      if (mg > kSmallM) {
        packed.setColumns(p1 - p0);
        im2colPanels(xg, cg, w, p0, p1, packed, 0,
                     panelCount(p1 - p0, packed.nr()));
        args.b = packed.panel(0), args.ldb = p1 - p0;
        sgemm(args, nullptr, packed);
      } else {
        im2colRange(xg, cg, w, p0, p1, col.data(), plainLayout(p0, p1));
        args.b = col.data(), args.ldb = p1 - p0;
        sgemm(args, nullptr);
      }
      ep.apply(yg, outSize, 0, mg, p0, p1);
    }
  });
}

/// Wᵀ (args.b, transposed, n x k) packed once per step: the B of a
/// transposed conv GEMM whose weight is a weight of the model.
std::shared_ptr<const PackedB> cachedWeightsT(KernelContext &ctx,
                                              const GemmArgs &args) {
  const GemmIsa isa = bestGemmIsa();
  const uint64_t key =
      stepCacheKey(args.b, {uint64_t(args.n), uint64_t(args.k), uint64_t(isa)});
  return ctx.stepCache()->get<PackedB>(key, [&] { return PackedB(args, isa); });
}

/// Cᵀ = args.a · Wᵀ (args.b, transposed) on the pool, Wᵀ's panels from
/// the step's cache when `cacheW` (the weight is one) and the GEMM takes
/// more than kSmallM rows (fewer read W in place).
void transposedConvGemm(KernelContext &ctx, const GemmArgs &args, bool cacheW) {
  if (cacheW && args.m > kSmallM && ctx.stepCache())
    sgemm(args, ctx.pool(), *cachedWeightsT(ctx, args));
  else
    sgemm(args, ctx.pool());
}

/// Rows [o0, o1) of y [m, outSize] from Cᵀ [outSize, m].
void transposeRows(const float *t, int64_t m, int64_t outSize, int64_t o0,
                   int64_t o1, float *y) {
  for (int64_t o = o0; o < o1; ++o)
    for (int64_t p = 0; p < outSize; ++p)
      y[o * outSize + p] = t[p * m + o];
}

/// Few output positions (a VAD's 4-frame convs): C = W · cols would fill
/// one NR-wide column panel to outSize of its 32 columns, so the GEMM runs
/// transposed, Cᵀ = colsᵀ · Wᵀ, into a small buffer then transposed into
/// y. Wᵀ's panels are kept in the step's cache when the weight is one (a
/// single group); up to kSmallM positions read W in place instead.
void narrowConv(KernelContext &ctx, const float *wg, const float *cols,
                int64_t mg, int64_t outSize, int64_t kdim, bool cacheW,
                float *yg) {
  std::vector<float> t(size_t(outSize * mg));
  GemmArgs args;
  args.m = outSize, args.n = mg, args.k = kdim;
  args.a = cols, args.lda = outSize, args.transA = true;
  args.b = wg, args.ldb = kdim, args.transB = true;
  args.c = t.data(), args.ldc = mg;
  transposedConvGemm(ctx, args, cacheW);
  transposeRows(t.data(), mg, outSize, 0, mg, yg);
}

/// Kernel width from which a one-channel 1-D conv runs on x's windows in
/// place (signalConv): STFT front ends take 256 to 512 taps.
constexpr int64_t kSignalTaps = 32;

/// Whether the conv is one input channel's 1-D windows (after
/// hoistUnitInnerDims), unpadded and undilated, at least kSignalTaps wide.
bool isSignalConv(const Window &w, int64_t c, int64_t group) {
  return group == 1 && c == 1 && w.in[0] == 1 && w.in[1] == 1 &&
         w.k[2] >= kSignalTaps && w.dil[2] == 1 && w.pad[2] == 0 &&
         w.padEnd[2] == 0;
}

/// A one-channel 1-D conv (openWakeWord's log-mel front end: 257 filters
/// of 512 taps at a hop of 160, twice) is a GEMM whose A rows are x's
/// windows: row t is x[t·stride ..], so A is x itself with lda = stride
/// and no im2col at all. Cᵀ = windows · Wᵀ, with Wᵀ's panels kept in the
/// step's cache, then transposed into y with the epilogue: 1.3x the
/// im2col GEMM on one thread, whose 97 positions padded 4 column panels.
void signalConv(KernelContext &ctx, const Window &w, const float *x, int64_t n,
                const float *wt, bool cacheW, int64_t m, const ConvEpilogue &ep,
                float *y) {
  const int64_t outSize = w.outSize();
  std::vector<float> t(size_t(outSize * m));
  for (int64_t b = 0; b < n; ++b) {
    GemmArgs args;
    args.m = outSize, args.n = m, args.k = w.k[2];
    args.a = x + b * w.inSize(), args.lda = w.stride[2];
    args.b = wt, args.ldb = w.k[2], args.transB = true;
    args.c = t.data(), args.ldc = m;
    transposedConvGemm(ctx, args, cacheW);
    float *yb = y + b * m * outSize;
    ctx.parallelFor(m, std::max<int64_t>(1, 16384 / outSize),
                    [&](int64_t o0, int64_t o1) {
                      transposeRows(t.data(), m, outSize, o0, o1, yb);
                      ep.apply(yb, outSize, o0, o1, 0, outSize);
                    });
  }
}

/// Columns of every image's im2col matrix side by side, at most this many
/// floats, for batchedNarrowConv.
constexpr int64_t kMaxBatchedColumns = int64_t(1) << 22;

/// Few output positions over several images of one group (silero VAD's
/// 4-frame convs over a batch of 10): each task takes a run of images,
/// puts their im2col columns side by side and runs one transposed GEMM,
/// Cᵀ = colsᵀ · Wᵀ, serially, so the weights are read once per task rather
/// than once per image (a 4-row GEMM each); then each image's rows are
/// transposed into y with the epilogue. Splitting images rather than the
/// GEMM keeps each thread's work independent: a threaded 40-row GEMM was
/// slower on 2 threads than on 1.
void batchedNarrowConv(KernelContext &ctx, const Window &w, const float *x,
                       int64_t n, int64_t c, const float *wt, int64_t m,
                       bool cacheW, const ConvEpilogue &ep, float *y) {
  const int64_t kdim = c * w.k[0] * w.k[1] * w.k[2], outSize = w.outSize();
  const int64_t rows = n * outSize;
  std::vector<float> t(size_t(rows * m));
  GemmArgs whole;
  whole.m = rows, whole.n = m, whole.k = kdim, whole.transA = true;
  whole.b = wt, whole.ldb = kdim, whole.transB = true;
  whole.ldc = m;
  std::shared_ptr<const PackedB> packed;
  if (cacheW && ctx.stepCache())
    packed = cachedWeightsT(ctx, whole);
  ctx.parallelFor(n, 1, [&](int64_t b0, int64_t b1) {
    // The task's own columns: rows of a shared matrix would put two
    // threads' columns in one cache line.
    const int64_t taskRows = (b1 - b0) * outSize;
    std::vector<float> cols(size_t(kdim * taskRows));
    for (int64_t b = b0; b < b1; ++b)
      im2colRange(x + b * c * w.inSize(), c, w, 0, outSize,
                  cols.data() + (b - b0) * outSize,
                  ColLayout{taskRows, outSize, 0});
    GemmArgs args = whole;
    args.m = taskRows;
    args.a = cols.data(), args.lda = taskRows;
    args.c = t.data() + b0 * outSize * m;
    if (packed)
      sgemm(args, nullptr, *packed);
    else
      sgemm(args, nullptr);
    for (int64_t b = b0; b < b1; ++b) {
      float *yb = y + b * m * outSize;
      transposeRows(t.data() + b * outSize * m, m, outSize, 0, m, yb);
      ep.apply(yb, outSize, 0, m, 0, outSize);
    }
  });
}

/// One image's group: in blocks when large, else its whole im2col matrix
/// (or, for a 1x1 stride-1 conv, the input itself) times the weights.
/// The epilogue over a whole group's output, channels split across the
/// pool.
void groupEpilogue(KernelContext &ctx, const ConvEpilogue &ep, int64_t mg,
                   int64_t outSize, float *yg) {
  if (!ep.any())
    return;
  ctx.parallelFor(mg, std::max<int64_t>(1, 16384 / outSize),
                  [&](int64_t o0, int64_t o1) {
                    ep.apply(yg, outSize, o0, o1, 0, outSize);
                  });
}

/// The GEMM of one image's group without its epilogue: its whole im2col
/// matrix (or, for a 1x1 stride-1 conv, the input itself) times the
/// weights.
void groupGemm(KernelContext &ctx, const Window &w, const float *xg,
               const float *wg, int64_t cg, int64_t mg, bool direct,
               bool cacheW, std::vector<float> &col, float *yg) {
  const int64_t kdim = cg * w.k[0] * w.k[1] * w.k[2], outSize = w.outSize();
  GemmArgs args;
  args.m = mg, args.n = outSize, args.k = kdim;
  args.a = wg, args.lda = kdim;
  args.c = yg, args.ldc = outSize;
  if (!direct && mg > kSmallM && outSize >= kNarrowOutput) {
    PackedB packed(kdim, outSize, bestGemmIsa());
    ctx.parallelFor(panelCount(outSize, packed.nr()), 1,
                    [&](int64_t q0, int64_t q1) {
                      im2colPanels(xg, cg, w, 0, outSize, packed, q0, q1);
                    });
    args.b = packed.panel(0), args.ldb = outSize;
    return sgemm(args, ctx.pool(), packed);
  }
  if (!direct) {
    col.resize(size_t(kdim * outSize));
    im2colRange(xg, cg, w, 0, outSize, col.data(), plainLayout(0, outSize));
  }
  const float *cols = direct ? xg : col.data();
  if (outSize < kNarrowOutput && mg > outSize)
    return narrowConv(ctx, wg, cols, mg, outSize, kdim, cacheW, yg);
  args.b = cols, args.ldb = outSize;
  sgemm(args, ctx.pool());
}

/// One image's group: in blocks when large (each block's epilogue right
/// after its GEMM), else the whole GEMM, then the epilogue.
void groupConv(KernelContext &ctx, const Window &w, const float *xg,
               const float *wg, int64_t cg, int64_t mg, bool direct,
               bool cacheW, const ConvEpilogue &ep, std::vector<float> &col,
               float *yg) {
  const int64_t kdim = cg * w.k[0] * w.k[1] * w.k[2], outSize = w.outSize();
  // ~1 MiB of columns per block (256 KiB to 2 MiB measured alike within
  // noise on a 96 -> 24 channel 3x3 conv), and at least 4 blocks.
  const int64_t block = std::max<int64_t>(256, 262144 / kdim / 16 * 16);
  if (!direct && outSize >= 4 * block)
    return blockedConv(ctx, w, xg, wg, cg, mg, block, ep, yg);
  groupGemm(ctx, w, xg, wg, cg, mg, direct, cacheW, col, yg);
  groupEpilogue(ctx, ep, mg, outSize, yg);
}

Status convKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 4, 1); !s)
    return s;
  if (Status s = ctx.expectInputsDType({DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0), &wt = ctx.input(1);
  ConvGeometry geo;
  if (Status s = planConv(ctx, &geo); !s)
    return s;
  const int64_t n = geo.n, c = geo.c, m = geo.m, group = geo.group;
  Window &w = geo.w;
  const bool hasBias = ctx.hasInput(2);
  if (hasBias && ctx.input(2).numElements() != m)
    return ctx.error("bias must have M elements");
  if (Status s = ctx.setOutputShape(0, outputShape(n, m, geo.spatialRank, w));
      !s)
    return s;
  ConvActivation act;
  if (Status s = parseConvActivation(ctx, &act); !s)
    return s;
  if (ctx.hasInput(3)) { // added after the activation, as y is stored
    if (ctx.input(3).shape != ctx.output(0).shape)
      return ctx.error("residual must have the output's shape");
    act.residual = ctx.input(3).as<float>();
    act.outputBase = ctx.output(0).as<float>();
  }
  hoistUnitInnerDims(w);
  const int64_t cg = c / group, mg = m / group;
  if (cg == 1 && group > 1) {
    depthwiseConv(ctx, w, n, c, m, act, ctx.output(0).as<float>());
    return Status::ok();
  }
  const int64_t kdim = cg * w.k[0] * w.k[1] * w.k[2];
  bool direct = w.outSize() == w.inSize();
  for (int d = 0; d < kSpatial; ++d)
    direct &= w.k[d] == 1 && w.stride[d] == 1 && w.pad[d] == 0;
  const float *x0 = x.as<float>(), *w0 = wt.as<float>();
  const float *bias = hasBias ? ctx.input(2).as<float>() : nullptr;
  float *y = ctx.output(0).as<float>();
  const int64_t outSize = w.outSize();
  if (outSize == 0 || mg == 0)
    return Status::ok();
  // One (image, group) of the output: its GEMM, bias and activation.
  auto imageGroup = [&](int64_t t, std::vector<float> &col) {
    const int64_t b = t / group, g = t % group;
    float *yg = y + (b * m + g * mg) * outSize;
    ConvEpilogue ep;
    ep.bias = bias ? bias + g * mg : nullptr;
    ep.act = act;
    groupConv(ctx, w, x0 + (b * c + g * cg) * w.inSize(), w0 + g * mg * kdim,
              cg, mg, direct, wt.constant && group == 1, ep, col, yg);
  };
  if (isSignalConv(w, c, group)) {
    ConvEpilogue ep;
    ep.bias = bias, ep.act = act;
    signalConv(ctx, w, x0, n, w0, wt.constant, m, ep, y);
    return Status::ok();
  }
  // A batch of maps of a few positions is one GEMM over all of them: the
  // implicit conv, image by image, spent most of Silero VAD's 4-, 2- and
  // 1-frame convs on per-image setup and 6-position tiles holding one.
  if (group == 1 && n > 1 && outSize < kNarrowOutput && m > outSize &&
      kdim * n * outSize <= kMaxBatchedColumns) {
    ConvEpilogue ep;
    ep.bias = bias, ep.act = act;
    batchedNarrowConv(ctx, w, x0, n, c, w0, m, wt.constant, ep, y);
    return Status::ok();
  }
  if (group == 1 && implicitConvFits(w, c, m)) {
    for (int64_t b = 0; b < n; ++b)
      implicitConv(ctx, w, x0 + b * c * w.inSize(), c, w0, wt.constant, m, bias,
                   act, y + b * m * outSize);
    return Status::ok();
  }
  // Small GEMMs (a VAD's 4-frame convs over a batch of 10) spend more on
  // waking the pool than on arithmetic: then (image, group) pairs run in
  // parallel, each GEMM serially (the nested parallelFor runs inline).
  const int64_t tasks = n * group;
  if (tasks > 1 && mg * outSize * kdim < kSmallConvWork) {
    ctx.parallelFor(tasks, 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> col;
      for (int64_t t = t0; t < t1; ++t)
        imageGroup(t, col);
    });
    return Status::ok();
  }
  std::vector<float> col;
  for (int64_t t = 0; t < tasks; ++t)
    imageGroup(t, col);
  return Status::ok();
}

} // namespace

void addConvKernels(std::vector<KernelImpl> &table) {
  table.push_back({"conv", convKernel});
}

} // namespace ingot::cpu
