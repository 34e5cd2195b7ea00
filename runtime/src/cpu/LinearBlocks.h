//===- LinearBlocks.h - Blocking and epilogue shared by linear paths --===//
//
// The pieces every weight format's linear path shares (Linear.cpp for f32,
// f16 and bf16; LinearQuantRun.cpp for the quantised formats): the split
// of output features into per-thread blocks and L2 panels, and the fused
// epilogue y = act(y) + residual run on each chunk while it is in cache.
// Templates, so the per-format dot-product calls inline into the loops.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "cpu/KernelUtil.h"
#include "cpu/Linear.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ingot::cpu::linear {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Bytes of weights per "nk" panel: read from memory once, then from L2 by
/// every row group.
constexpr int64_t kNkPanelBytes = 256 * 1024;

/// Rows [r0, r0 + rows) of `a` as a call of their own.
inline LinearDecodeArgs rowSlice(const LinearDecodeArgs &a, int64_t r0,
                                 int64_t rows) {
  LinearDecodeArgs s = a;
  s.m = rows;
  s.x = a.x + r0 * a.k;
  s.y = a.y + r0 * a.n;
  return s;
}

enum class Act { None, Relu, Silu, Gelu, GeluTanh, HardSwish };

/// What follows the dot products (and bias) on every output element.
struct Epilogue {
  Act act = Act::None;
  const float *residual = nullptr; // [m, n], or null
  bool residualIsY = false;        // the residual lives where y is written
  bool any() const { return act != Act::None || residual; }
};

/// y = act(y) in place over `len` values (LinearEpilogue.cpp).
void activate(Act act, float *y, int64_t len);
/// The kernel's `activation` attribute (absent: none); linear and conv
/// share the names.
Status parseActivation(KernelContext &ctx, Act *act);

/// Runs `dots` (which writes y[r0:r1, c0:c1) of `a`) then the epilogue on
/// that chunk.
template <typename Fn>
void chunkWithEpilogue(const Epilogue &ep, const LinearDecodeArgs &a,
                       int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                       Fn &&dots) {
  if (!ep.any()) {
    dots();
    return;
  }
  const int64_t w = c1 - c0;
  thread_local std::vector<float> saved;
  if (ep.residualIsY) {
    saved.resize(size_t((r1 - r0) * w));
    for (int64_t r = r0; r < r1; ++r)
      std::copy_n(ep.residual + r * a.n + c0, w, saved.data() + (r - r0) * w);
  }
  dots();
  for (int64_t r = r0; r < r1; ++r) {
    float *y = a.y + r * a.n + c0;
    activate(ep.act, y, w);
    if (!ep.residual)
      continue;
    const float *res = ep.residualIsY ? saved.data() + (r - r0) * w
                                      : ep.residual + r * a.n + c0;
    for (int64_t i = 0; i < w; ++i)
      y[i] = y[i] + res[i];
  }
}

/// Runs `dots(r, rows, j, j1)` (y[r:r+rows, j:j1) of `a`) over all of y in
/// blocks of `block` output features, each followed by the epilogue.
/// `rowBytes` is the bytes of one weight row, for the split over threads.
template <typename Dots>
void forNkBlocks(const KernelContext &ctx, const LinearDecodeArgs &a,
                 int64_t block, int64_t rowBytes, int64_t maxRows,
                 const Epilogue &ep, Dots &&dots) {
  // A chunk should hold at least ~64 KiB of weights to be worth a thread.
  rowBytes = std::max<int64_t>(1, rowBytes);
  const int64_t grain = std::max<int64_t>(1, ceilDiv(65536, rowBytes * block));
  if (a.m <= maxRows) {
    // With an epilogue, pieces of at most ~32 KiB of y, so that it is
    // still in L1 when the epilogue reads it.
    const int64_t piece =
        ep.any() ? std::max<int64_t>(1, 8192 / a.m / block) * block : a.n;
    ctx.parallelFor(ceilDiv(a.n, block), grain, [&](int64_t b, int64_t e) {
      const int64_t n1 = std::min(a.n, e * block);
      for (int64_t j = b * block; j < n1; j += piece) {
        const int64_t j1 = std::min(n1, j + piece);
        chunkWithEpilogue(ep, a, 0, a.m, j, j1, [&] { dots(0, a.m, j, j1); });
      }
    });
    return;
  }
  const int64_t panel =
      std::max<int64_t>(1, kNkPanelBytes / (rowBytes * block)) * block;
  ctx.parallelFor(ceilDiv(a.n, block), grain, [&](int64_t b, int64_t e) {
    const int64_t n1 = std::min(a.n, e * block);
    for (int64_t j = b * block; j < n1; j += panel) {
      const int64_t j1 = std::min(n1, j + panel);
      for (int64_t r = 0; r < a.m; r += maxRows) {
        const int64_t rows = std::min(maxRows, a.m - r);
        chunkWithEpilogue(ep, a, r, r + rows, j, j1,
                          [&] { dots(r, rows, j, j1); });
      }
    }
  });
}

/// Linear on a quantised weight (LinearQuant.h) or a "q16" weight
/// (LinearQ16.h) with its per-row int8 activations (LinearQuantRun.cpp).
void runNkQuant(const KernelContext &ctx, const LinearDecodeArgs &a,
                int64_t group, const Epilogue &ep);
void runQ16(const KernelContext &ctx, const LinearDecodeArgs &a, int64_t group,
            const Epilogue &ep);

} // namespace ingot::cpu::linear
