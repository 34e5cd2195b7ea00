//===- Reduce.cpp - reduce_mean -------------------------------------------===//
//
// Sums accumulate in double so a mean over many elements keeps f32 accuracy.
// Reducing trailing axes (the usual case: statistics over the hidden dim) is
// a per-row sum in parallel; any other axis set walks the input once with
// the output as a broadcast operand (stride 0 along reduced dims).
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"

#include <limits>

namespace ingot::cpu {
namespace {

Status reduceMeanKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  std::vector<int64_t> axes;
  int64_t keepDims;
  // Opset 18 moved axes to an input; accept either.
  if (ctx.hasInput(1)) {
    if (Status s = readIndexVector(ctx, 1, &axes); !s)
      return s;
  } else if (Status s = ctx.attrInts("axes", &axes, std::vector<int64_t>{});
             !s) {
    return s;
  }
  if (Status s = ctx.attrInt("keepdims", &keepDims, 1); !s)
    return s;
  int64_t noop;
  if (Status s = ctx.attrInt("noop_with_empty_axes", &noop, 0); !s)
    return s;
  if (noop && axes.empty()) { // opset 18: no axes means identity
    if (Status s = ctx.setOutputShape(0, x.shape); !s)
      return s;
    if (ctx.output(0).data != x.data && x.bytes())
      std::memmove(ctx.output(0).data, x.data, x.bytes());
    return Status::ok();
  }
  shape::Shape outShape, keptShape;
  std::string err;
  if (!shape::reduce(x.shape, axes, keepDims != 0, &outShape, &err))
    return ctx.error(err);
  shape::reduce(x.shape, axes, true, &keptShape, nullptr);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;

  const int64_t rank = x.shape.size();
  const int64_t total = x.numElements();
  const int64_t outN = shape::numElements(keptShape);
  const int64_t count = outN ? total / outN : 0;
  const float *in = x.as<float>();
  float *out = ctx.output(0).as<float>();
  if (outN == 0)
    return Status::ok();
  if (count == 0) { // mean of nothing
    for (int64_t i = 0; i < outN; ++i)
      out[i] = std::numeric_limits<float>::quiet_NaN();
    return Status::ok();
  }

  // Trailing axes only: every output is the mean of `count` contiguous values.
  int64_t firstReduced = rank;
  while (firstReduced > 0 && keptShape[firstReduced - 1] == 1)
    --firstReduced;
  bool trailing = true;
  for (int64_t i = 0; i < firstReduced; ++i)
    trailing &= keptShape[i] == x.shape[i];
  if (trailing) {
    const int64_t grain = std::max<int64_t>(1, 16384 / count);
    ctx.parallelFor(outN, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        out[r] = float(sumF32(in + r * count, count) / double(count));
      }
    });
    return Status::ok();
  }

  std::vector<double> acc(outN, 0.0);
  BroadcastPlan plan;
  if (!makeBroadcastPlan(x.shape, {&keptShape}, &plan))
    return ctx.error("rank " + std::to_string(rank) +
                     " is above the supported " + std::to_string(kMaxRank));
  const int last = plan.rank - 1;
  const int64_t so = plan.strides[0][last];
  int64_t pos = 0;
  forEachRun(plan, 0, total, [&](const int64_t *off, int64_t cnt) {
    const float *src = in + pos;
    if (so == 0) {
      double s = 0;
      for (int64_t i = 0; i < cnt; ++i)
        s += src[i];
      acc[off[0]] += s;
    } else {
      for (int64_t i = 0; i < cnt; ++i)
        acc[off[0] + i] += src[i];
    }
    pos += cnt;
  });
  for (int64_t i = 0; i < outN; ++i)
    out[i] = float(acc[i] / double(count));
  return Status::ok();
}

} // namespace

void addReduceKernels(std::vector<KernelImpl> &table) {
  table.push_back({"reduce_mean", reduceMeanKernel});
}

} // namespace ingot::cpu
