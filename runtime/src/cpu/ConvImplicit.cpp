//===- ConvImplicit.cpp - conv as a GEMM over shifted input rows ----------===//
#include "cpu/ConvImplicit.h"
#include "cpu/ConvImplicitParts.h"

#include "cpu/StepCache.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace ingot::cpu {
namespace implicit {

float *scratch(ScratchUse use, size_t floats, std::vector<float> &oneOff) {
  thread_local std::vector<float> buffers[2];
  std::vector<float> &b = floats > kKeptScratchFloats ? oneOff : buffers[use];
  if (b.size() < floats)
    b.resize(floats);
  return b.data();
}

} // namespace implicit

namespace {

using namespace implicit;

/// `lines` lines of `wo` valid columns (each `wq` apart in src) into y
/// back to back, plus *bias when given. Cloned per ISA: on the baseline
/// ISA these copies were 7% of openWakeWord's embedding CNN (perf), whose
/// lines are 2 to 32 wide.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
storeLines(const float *src, int64_t wq, int64_t lines, int64_t wo,
           const float *bias, float *y) {
  for (int64_t l = 0; l < lines; ++l, src += wq, y += wo)
    if (bias)
      for (int64_t o = 0; o < wo; ++o)
        y[o] = src[o] + *bias;
    else
      std::memcpy(y, src, size_t(wo) * sizeof(float));
}

/// The weights [m, k] as the tiles read them: each row block's k steps of
/// `height` values, rows past the block's own zero.
std::vector<float> packWeights(const float *wt, int64_t m, int64_t k, int mr) {
  const std::vector<RowBlock> blocks = rowBlocks(m, mr);
  const RowBlock &last = blocks.back();
  std::vector<float> packed(size_t((last.r0 + last.height) * k), 0.0f);
  for (const RowBlock &b : blocks)
    for (int64_t r = 0; r < b.rows; ++r) {
      float *dst = packed.data() + b.r0 * k + r;
      const float *src = wt + (b.r0 + r) * k;
      for (int64_t kk = 0; kk < k; ++kk)
        dst[kk * b.height] = src[kk];
    }
  return packed;
}

std::shared_ptr<const std::vector<float>>
packedWeights(KernelContext &ctx, const float *wt, bool constant, int64_t m,
              int64_t k, int mr) {
  if (!constant || !ctx.stepCache())
    return std::make_shared<const std::vector<float>>(
        packWeights(wt, m, k, mr));
  const uint64_t key =
      stepCacheKey(wt, {uint64_t(m), uint64_t(k), uint64_t(mr)});
  return ctx.stepCache()->get<std::vector<float>>(
      key, [&] { return packWeights(wt, m, k, mr); });
}

/// Columns of tiles a task may span: 16 tiles keep its C rows (16 x 32
/// floats a row) and the planes' rows it reads in L2.
constexpr int64_t kMaxTilesPerTask = 16;

/// The rows of the tallest group when `blocks` go `per` to a group.
int64_t tallestGroup(const std::vector<RowBlock> &blocks, int64_t per) {
  int64_t tallest = 0;
  for (size_t g = 0; g < blocks.size(); g += size_t(per)) {
    int64_t rows = 0;
    for (size_t i = g; i < std::min(blocks.size(), g + size_t(per)); ++i)
      rows += blocks[i].height;
    tallest = std::max(tallest, rows);
  }
  return tallest;
}

} // namespace

namespace implicit {

/// The split with the shortest critical path: the pool gives each thread
/// an equal run of tasks, so the slowest thread does ceil(tasks / threads)
/// tasks, each costing its tiles of columns times its group's rows (a
/// tile computes every column of its width, valid or not). On YOLOv8n's
/// 10 x 10 outputs a split by lines alone gave 5 tasks to 2 threads and
/// left one idle for a third of the conv. Ties go to fewer, larger tasks:
/// each B row is then read by more row blocks; with `fewerWeightsFirst`
/// (channel tiles) to fewer blocks per group first, so that a thread
/// streams the weights of fewer channels.
Split splitWork(const Window &w, const Planes &p,
                const std::vector<RowBlock> &blocks, int nr, unsigned threads,
                bool fewerWeightsFirst) {
  const int64_t ho = w.out[1], nb = int64_t(blocks.size());
  const int64_t maxLines =
      std::clamp<int64_t>(kMaxTilesPerTask * nr / p.wq, 1, ho);
  Split best{};
  int64_t bestCost = -1, bestTasks = 0;
  for (int64_t lines = 1; lines <= maxLines; ++lines) {
    const int64_t chunks = (ho + lines - 1) / lines;
    if ((ho + chunks - 1) / chunks != lines)
      continue; // the same chunks as fewer lines
    const int64_t tiles = (lines * p.wq + nr - 1) / nr;
    for (int64_t per = nb; per >= 1; --per) {
      const int64_t groups = (nb + per - 1) / per;
      if (per > 1 && (nb + per - 2) / (per - 1) == groups)
        continue; // the same groups as fewer blocks per group
      const int64_t tasks = chunks * groups;
      const int64_t cost =
          (tasks + threads - 1) / threads * tiles * tallestGroup(blocks, per);
      const bool tieWins = fewerWeightsFirst && per != best.blocksPerGroup
                               ? per < best.blocksPerGroup
                               : tasks < bestTasks;
      if (bestCost < 0 || cost < bestCost || (cost == bestCost && tieWins)) {
        best = {lines, chunks, groups, per};
        bestCost = cost, bestTasks = tasks;
      }
    }
  }
  return best;
}

} // namespace implicit

using namespace implicit;

std::vector<RowBlock> rowBlocks(int64_t m, int mr) {
  std::vector<RowBlock> blocks;
  int64_t r = 0;
  for (; m - r > mr + mr / 3; r += mr)
    blocks.push_back({r, mr, mr});
  if (m - r > mr) {
    blocks.push_back({r, 2 * mr / 3, 2 * mr / 3});
    r += 2 * mr / 3;
  }
  if (const int64_t rest = m - r; rest > 0)
    blocks.push_back({r, rest,
                      rest <= mr / 3       ? mr / 3
                      : rest <= 2 * mr / 3 ? 2 * mr / 3
                                           : mr});
  return blocks;
}

namespace {

/// Whether the conv runs on the ISA's channel tiles: whole vectors, 2 to
/// 4 in the last group of 64. openWakeWord's 72 channels (64 + a group of
/// 8) ran 25% slower on channel tiles than on row tiles; its 48 (three
/// vectors, 8-position tiles) 1.1-1.2x faster (1 thread). A single pair (12
/// positions x 32 channels) only for a window: YOLOv8n's 16 -> 32 stride-2 3x3
/// ran 1.12x faster than on row tiles, its 32 -> 32 1x1 1.1x slower (the
/// transposes cost more than the planes they save).
bool onChannelTiles(const ImplicitKernels &kernels, const Window &w,
                    int64_t m) {
  const bool window = w.k[1] * w.k[2] > 1;
  const int64_t lastGroup = (m - 1) % kChannelGroup + 1;
  return kernels.channelBlock && kernels.transpose && m % kernels.lanes == 0 &&
         lastGroup >= 2 * kernels.lanes && (m >= kChannelGroup || window);
}

} // namespace

/// Output positions up to which a conv on channel tiles takes them.
constexpr int64_t kChannelTilePositions = 400;

bool implicitConvFits(const Window &w, int64_t c, int64_t m) {
  const bool flat = w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1;
  const bool unit = w.k[1] * w.k[2] == 1 && w.stride[1] * w.stride[2] == 1;
  const ImplicitKernels kernels = implicitKernels(bestGemmIsa());
  if (!flat || kernels.mr == 0 || m < 8)
    return false;
  // The channel tiles beat the im2col GEMMs on few positions, down to a
  // single tile (1 thread: YOLOv8n's 512 -> 256 and 256 -> 512 at 10x10
  // 1.2-1.25x; openWakeWord's 96 -> 96 3x1 at 12x4 and 8x2 1.4-1.7x, 2x
  // and more on two threads; on Zen 4 YOLOv8n's 384 -> 128 1x1 at 20x20
  // 1.1x, 1.25x on two), and lose on wide maps (PP-OCR's 240 -> 480 and
  // 480 -> 480 at 6x80 0.83x on an Intel Xeon; 128 -> 128 at 12x80 0.9x),
  // with the 40x40 ones within noise of it.
  if (w.outSize() <= kChannelTilePositions && onChannelTiles(kernels, w, m))
    return true;
  // Otherwise few output positions or channels: the im2col paths' narrow
  // and small-M GEMMs fit those better. A 1x1 conv over few input
  // channels reads x in place: against the GEMM over x it saves packing B
  // and a pass of the bias and activation over all of y, which cost more
  // than the arithmetic at K <= 64 (YOLOv8n's 80x80 32 -> 32 conv 1.2x on
  // one thread, 1.8x on two); at K = 128 to 480 (PP-OCR's recogniser) the
  // GEMM was 1.2x faster than the row tiles.
  return (!unit || c <= 64) && w.out[1] >= 4 && w.outSize() >= 64;
}

void implicitConv(KernelContext &ctx, const Window &w, const float *x,
                  int64_t c, const float *wt, bool weightIsConstant, int64_t m,
                  const float *bias, const ConvActivation &act, float *y) {
  implicitConvOn(bestGemmIsa(), ctx, w, x, c, wt, weightIsConstant, m, bias,
                 act, y);
}

void implicitConvOn(GemmIsa isa, KernelContext &ctx, const Window &w,
                    const float *x, int64_t c, const float *wt,
                    bool weightIsConstant, int64_t m, const float *bias,
                    const ConvActivation &act, float *y) {
  const ImplicitKernels kernels = implicitKernels(isa);
  const Planes p(w, kernels.nr);
  const int64_t k = c * w.k[1] * w.k[2];
  if (onChannelTiles(kernels, w, m)) {
    // Each position is its own broadcast, so a strided conv reads a padded
    // copy of x at its stride: no stride-phase planes, whose strided copy
    // was a fifth of a 32 -> 64 stride-2 conv at 160 x 160.
    Window unitStride = w;
    unitStride.stride[1] = unitStride.stride[2] = 1;
    const Planes unit(unitStride, kernels.nr);
    const InputRows in(ctx, unitStride, unit, x, c, kernels.nr,
                       /*validOnly=*/true);
    return channelConv(ctx, kernels, w, p, unit, in, wt, weightIsConstant, m,
                       bias, act, y);
  }
  InputRows in(ctx, w, p, x, c, kernels.nr, /*validOnly=*/false);
  const auto packed =
      packedWeights(ctx, wt, weightIsConstant, m, k, kernels.mr);
  const std::vector<RowBlock> blocks = rowBlocks(m, kernels.mr);
  const unsigned threads = ctx.pool() ? ctx.pool()->size() : 1;
  const Split s = splitWork(w, p, blocks, kernels.nr, threads, false);
  const int64_t ho = w.out[1], wo = w.out[2], outSize = w.outSize();
  if (readsInPlace(w))
    addTail(in, w, x, c, (s.chunks - 1) * s.lines * p.wq, kernels.nr,
            kernels.nr);
  ctx.parallelFor(s.chunks * s.mGroups, 1, [&](int64_t t0, int64_t t1) {
    const int64_t span =
        (s.lines * p.wq + kernels.nr - 1) / kernels.nr * kernels.nr;
    std::vector<float> largeTile;
    float *cbuf = scratch(
        kTileScratch, size_t(s.blocksPerGroup * kernels.mr * span), largeTile);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t line0 = t / s.mGroups * s.lines;
      const int64_t line1 = std::min(ho, line0 + s.lines);
      const int64_t b0 = t % s.mGroups * s.blocksPerGroup;
      const int64_t b1 =
          std::min<int64_t>(int64_t(blocks.size()), b0 + s.blocksPerGroup);
      const int64_t r0 = blocks[size_t(b0)].r0;
      ImplicitBlock blk;
      blk.k = k;
      blk.blocks = blocks.data() + b0, blk.numBlocks = b1 - b0;
      blk.packedA = packed->data();
      blk.rows = in.rows.data();
      blk.q0 = line0 * p.wq, blk.q1 = line1 * p.wq;
      blk.c = cbuf, blk.ldc = span;
      if (in.tailStart >= 0 && blk.q1 == outSize) {
        // Whole tiles from x, then the last from the padded copy.
        ImplicitBlock tail = blk;
        blk.q1 = in.tailStart;
        tail.rows = in.tailRows.data();
        tail.q0 = 0, tail.q1 = outSize - in.tailStart;
        tail.c = cbuf + (in.tailStart - blk.q0);
        if (blk.q1 > blk.q0)
          kernels.block(blk);
        kernels.block(tail);
      } else {
        kernels.block(blk);
      }
      const int64_t groupRows =
          blocks[size_t(b1 - 1)].r0 + blocks[size_t(b1 - 1)].rows - r0;
      // The valid columns of each line into y, then bias and activation
      // over the rows' contiguous run of output positions.
      for (int64_t r = 0; r < groupRows; ++r) {
        float *yr = y + (r0 + r) * outSize + line0 * wo;
        storeLines(cbuf + r * span, p.wq, line1 - line0, wo,
                   bias ? bias + r0 + r : nullptr, yr);
        act.apply(yr, (line1 - line0) * wo);
      }
    }
  });
}

} // namespace ingot::cpu
