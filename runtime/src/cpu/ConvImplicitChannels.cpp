//===- ConvImplicitChannels.cpp - implicit conv on channel tiles ----------===//
//
// With 64 or more output channels (in pairs of vectors), AVX-512's channel
// tiles compute Yᵀ: 6 positions x 64 channels a tile, the weights as the
// vectors and each input value a broadcast, 10 loads per 24 FMAs where the
// row tiles take 14, two of them across cache lines; 1.15-1.3x on
// YOLOv8n's 3x3 convs. A tile's positions need not be contiguous (each is
// its own broadcast), so the tiles run over the valid output positions
// only, not the planes' padding columns (5% of the work at 40 x 40, 20%
// at 10 x 10). Each task's Yᵀ is transposed into y 16 x 16 in registers
// with the bias; each value is the row tiles' FMA chain in the same k
// order, so the bits agree.
//
//===----------------------------------------------------------------------===//
#include "cpu/ConvImplicitParts.h"
#include "cpu/Linear.h"
#include "cpu/StepCache.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace ingot::cpu::implicit {
namespace {

/// Column steps that every channel tile width (6, 8 and 12) divides.
constexpr int64_t kChannelTileLcm = 24;

/// The weights [m, k] as channel tiles read them: per group of 64
/// channels, k steps of 64 floats, zeros past the last channel.
AlignedFloats packChannelWeights(const float *wt, int64_t m, int64_t k) {
  const int64_t groups = (m + kChannelGroup - 1) / kChannelGroup;
  AlignedFloats packed(size_t(groups * k * kChannelGroup));
  for (int64_t o = 0; o < m; ++o) {
    float *dst = packed.data() + o / kChannelGroup * k * kChannelGroup +
                 o % kChannelGroup;
    for (int64_t kk = 0; kk < k; ++kk)
      dst[kk * kChannelGroup] = wt[o * k + kk];
  }
  return packed;
}

std::shared_ptr<const AlignedFloats> channelWeights(KernelContext &ctx,
                                                    const float *wt,
                                                    bool constant, int64_t m,
                                                    int64_t k) {
  if (!constant || !ctx.stepCache())
    return std::make_shared<const AlignedFloats>(packChannelWeights(wt, m, k));
  const uint64_t key = stepCacheKey(wt, {uint64_t(m), uint64_t(k), 0xc4});
  return ctx.stepCache()->get<AlignedFloats>(
      key, [&] { return packChannelWeights(wt, m, k); });
}

/// T's positions [v0, v1) into y, `lanes` positions by `lanes` channels
/// at a time through the ISA's transpose (T holds a position's 64
/// channels together), plus bias; then the activation over each
/// channel's run.
void storeTransposed(const ImplicitKernels &kernels, const float *t,
                     int64_t outSize, int64_t v0, int64_t v1, int64_t c0,
                     int64_t c1, const float *bias, const ConvActivation &act,
                     float *y) {
  const int64_t lanes = kernels.lanes;
  for (int64_t v = v0; v < v1; v += lanes)
    for (int64_t cb = c0; cb < c1; cb += lanes)
      kernels.transpose(
          t + (v - v0) * kChannelGroup + (cb - c0), kChannelGroup,
          int(std::min(lanes, v1 - v)), int(std::min(lanes, c1 - cb)),
          bias ? bias + cb : nullptr, y + cb * outSize + v, outSize);
  for (int64_t ch = c0; ch < c1; ++ch)
    act.apply(y + ch * outSize + v0, v1 - v0);
}

} // namespace

/// The conv with channel tiles: tasks of line runs x groups of 64 output
/// channels, each into its own T buffer, then transposed into y.
void channelConv(KernelContext &ctx, const ImplicitKernels &kernels,
                 const Window &w, const Planes &p, const Planes &unit,
                 const InputRows &in, const float *wt, bool constant, int64_t m,
                 const float *bias, const ConvActivation &act, float *y) {
  const int64_t k = int64_t(in.rows.size());
  const auto packed = channelWeights(ctx, wt, constant, m, k);
  std::vector<RowBlock> groups;
  for (int64_t c0 = 0; c0 < m; c0 += kChannelGroup) {
    const int64_t rows = std::min(kChannelGroup, m - c0);
    groups.push_back({c0, rows, int((rows + 15) / 16 * 16)});
  }
  const unsigned threads = ctx.pool() ? ctx.pool()->size() : 1;
  const Split s = splitWork(w, p, groups, kernels.nr, threads, true);
  const int64_t ho = w.out[1], wo = w.out[2], outSize = w.outSize();
  ctx.parallelFor(s.chunks * s.mGroups, 1, [&](int64_t t0, int64_t t1) {
    const int64_t span = (s.lines * wo + kChannelTileLcm - 1) /
                         kChannelTileLcm * kChannelTileLcm;
    std::vector<float> largeTile;
    // The transposes read up to a vector of positions past the last.
    float *tbuf =
        scratch(kTileScratch, size_t((span + kernels.lanes) * kChannelGroup),
                largeTile);
    // Group-major: a thread's run of tasks covers as few groups, so as
    // few channels' weights, as the split allows.
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t line0 = t % s.chunks * s.lines;
      const int64_t line1 = std::min(ho, line0 + s.lines);
      const int64_t g0 = t / s.chunks * s.blocksPerGroup;
      const int64_t g1 =
          std::min<int64_t>(int64_t(groups.size()), g0 + s.blocksPerGroup);
      for (int64_t g = g0; g < g1; ++g) {
        const RowBlock &grp = groups[size_t(g)];
        ChannelBlock blk;
        blk.k = k, blk.vectors = grp.height / kernels.lanes;
        blk.w = packed->data() + grp.r0 * k, blk.ldw = kChannelGroup;
        blk.rows = in.rows.data();
        blk.v0 = line0 * wo, blk.v1 = line1 * wo;
        blk.wo = wo, blk.lineStep = w.stride[1] * unit.wq;
        blk.colStep = w.stride[2];
        blk.t = tbuf, blk.ldt = kChannelGroup;
        kernels.channelBlock(blk);
        storeTransposed(kernels, tbuf, outSize, blk.v0, blk.v1, grp.r0,
                        grp.r0 + grp.rows, bias, act, y);
      }
    }
  });
}

} // namespace ingot::cpu::implicit
