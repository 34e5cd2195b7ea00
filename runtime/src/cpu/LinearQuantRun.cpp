//===- LinearQuantRun.cpp - Linear on quantised and "q16" weights ------===//
//
// The quantised formats' dot products (LinearQuant.h, LinearQ16.h) under
// the blocking and epilogue of the f32 "nk" path (LinearBlocks.h), so a
// row's sums do not depend on the batch here either.
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearBlocks.h"
#include "cpu/LinearQ16.h"
#include "cpu/LinearQuant.h"

#include "ingot/Quant.h"

namespace ingot::cpu::linear {

/// Linear on a quantised weight (LinearQuant.h), with the blocking of
/// the f32 "nk" path.
void runNkQuant(const KernelContext &ctx, const LinearDecodeArgs &a,
                int64_t group, const Epilogue &ep) {
  const QuantLinearKernels &ks = bestQuantLinearKernels();
  QuantLinearArgs q;
  q.n = a.n, q.k = a.k, q.x = a.x, q.w = a.w, q.wType = a.wType;
  q.group = group, q.bias = a.bias;
  forNkBlocks(ctx, a, 8, quantRowBytes(a.wType, a.k, group),
              kQuantLinearMaxRows, ep,
              [&](int64_t r, int64_t rows, int64_t j, int64_t j1) {
                QuantLinearArgs s = q;
                s.m = rows, s.row0 = r, s.y = a.y + r * a.n;
                ks.nk(s, j, j1);
              });
}

/// Linear on a "q16" weight (LinearQ16.h) in groups of `group` (32, or k:
/// per channel): x quantised per row (on the pool when it is large), then
/// 16-row panels as blocks of the "nk" path.
void runQ16(const KernelContext &ctx, const LinearDecodeArgs &a, int64_t group,
            const Epilogue &ep) {
  const Q16LinearKernels &ks = bestQ16LinearKernels();
  // The calling thread's buffer, named by a plain reference: inside the
  // pool's lambda the thread_local itself would be each worker's own.
  thread_local QuantizedRows callerRows;
  QuantizedRows &xq = callerRows;
  xq.resize(a.m, a.k);
  const int64_t grain = std::max<int64_t>(1, 65536 / a.k);
  if (a.m <= grain)
    ks.quantize(a.x, 0, a.m, xq);
  else
    ctx.parallelFor(a.m, grain,
                    [&](int64_t b, int64_t e) { ks.quantize(a.x, b, e, xq); });
  Q16LinearArgs q;
  q.n = a.n, q.k = a.k, q.x = &xq, q.wType = a.wType, q.group = group;
  q.bias = a.bias;
  q.w = static_cast<const uint8_t *>(a.w), q.y = a.y;
  forNkBlocks(ctx, a, kQ16PanelRows, quantRowBytes(a.wType, a.k, group),
              kQuantLinearMaxRows, ep,
              [&](int64_t r, int64_t rows, int64_t j, int64_t j1) {
                ks.nk(q, r, r + rows, j, j1);
              });
}

} // namespace ingot::cpu::linear
