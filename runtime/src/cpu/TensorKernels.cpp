//===- TensorKernels.cpp - Coverage kernels (tensor) -------------------===//
//
// flatten, expand, tile, range, depth_to_space, space_to_depth, one_hot and
// non_zero, and
// the registration of the whole tensor family (docs/kernels-tensor.md).
// The movers are dtype-agnostic: they copy elements by byte size.
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorKernels.h"

#include <cmath>

namespace ingot::cpu {
namespace {

Status flattenKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  int64_t axis;
  if (Status s = ctx.attrInt("axis", &axis, 1); !s)
    return s;
  int64_t rank = x.shape.size();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.error("axis out of range");
  shape::Shape out = {dimProduct(x.shape, 0, axis),
                      dimProduct(x.shape, axis, rank)};
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  if (ctx.output(0).data != x.data && x.bytes())
    std::memmove(ctx.output(0).data, x.data, x.bytes());
  return Status::ok();
}

Status expandKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  std::vector<int64_t> target;
  if (Status s = readIndexVector(ctx, 1, &target); !s)
    return s;
  shape::Shape out;
  std::string err;
  if (!shape::broadcast({x.shape, target}, &out, &err))
    return ctx.error(err);
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  BroadcastPlan plan;
  if (!makeBroadcastPlan(out, {&x.shape}, &plan))
    return ctx.error("rank above the supported maximum");
  dispatchBySize(dtypeSize(x.dtype), [&]<typename T>() {
    const T *src = x.as<T>();
    T *dst = ctx.output(0).as<T>();
    int64_t pos = 0;
    forEachRun(plan, 0, plan.total, [&](const int64_t *off, int64_t n) {
      int64_t st = plan.strides[0][plan.rank - 1];
      for (int64_t i = 0; i < n; ++i)
        dst[pos + i] = src[off[0] + i * st];
      pos += n;
    });
  });
  return Status::ok();
}

Status tileKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  std::vector<int64_t> reps;
  if (Status s = readIndexVector(ctx, 1, &reps); !s)
    return s;
  if (reps.size() != x.shape.size())
    return ctx.error("repeats has " + std::to_string(reps.size()) +
                     " entries, the input rank is " +
                     std::to_string(x.shape.size()));
  shape::Shape out = x.shape;
  for (size_t i = 0; i < out.size(); ++i) {
    if (reps[i] < 0)
      return ctx.error("negative repeat");
    out[i] *= reps[i];
  }
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  if (shape::numElements(out) == 0)
    return Status::ok();
  std::vector<int64_t> inSt = stridesOf(x.shape);
  dispatchBySize(dtypeSize(x.dtype), [&]<typename T>() {
    const T *src = x.as<T>();
    T *dst = ctx.output(0).as<T>();
    std::vector<int64_t> idx(out.size(), 0);
    int64_t pos = 0;
    do {
      int64_t off = 0;
      for (size_t d = 0; d < out.size(); ++d)
        off += (idx[d] % x.shape[d]) * inSt[d];
      dst[pos++] = src[off];
    } while (nextIndex(idx, out));
  });
  return Status::ok();
}

template <typename T> int64_t rangeCount(T start, T limit, T delta) {
  return std::max<int64_t>(
      0, int64_t(std::ceil(double(limit - start) / double(delta))));
}

Status rangeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 3, 1); !s)
    return s;
  DType dt = ctx.input(0).dtype;
  for (size_t i = 0; i < 3; ++i)
    if (ctx.input(i).numElements() != 1 || ctx.input(i).dtype != dt)
      return ctx.error("start, limit and delta must be scalars of one type");
  if (Status s = ctx.expectOutputDType(0, {dt}); !s)
    return s;
  auto run = [&]<typename T>() -> Status {
    T start = ctx.input(0).as<T>()[0], limit = ctx.input(1).as<T>()[0],
      delta = ctx.input(2).as<T>()[0];
    if (delta == T(0))
      return ctx.error("delta must not be 0");
    int64_t n = rangeCount<T>(start, limit, delta);
    if (Status s = ctx.setOutputShape(0, {n}); !s)
      return s;
    // Accumulated like onnxruntime, so float sequences round alike.
    T v = start;
    for (int64_t i = 0; i < n; ++i, v += delta)
      ctx.output(0).as<T>()[i] = v;
    return Status::ok();
  };
  switch (dt) {
  case DType::F32:
    return run.operator()<float>();
  case DType::I64:
    return run.operator()<int64_t>();
  case DType::I32:
    return run.operator()<int32_t>();
  default:
    return ctx.error("range takes f32, i64 or i32");
  }
}

/// depth_to_space, and its inverse space_to_depth (`toDepth`): the same
/// walk over the [N, C, H*b, W*b] space tensor, copying from or into the
/// matching element of the [N, C*b*b, H, W] depth tensor.
Status blockShuffle(KernelContext &ctx, bool toDepth) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  int64_t b;
  std::string mode;
  if (Status s = ctx.attrInt("blocksize", &b); !s)
    return s;
  if (Status s = ctx.attrStr("mode", &mode, "DCR"); !s)
    return s;
  const shape::Shape &xs = x.shape;
  if (xs.size() != 4 || b < 1 ||
      (toDepth ? xs[2] % b != 0 || xs[3] % b != 0 : xs[1] % (b * b) != 0))
    return ctx.error(toDepth ? "expects [N, C, H, W] with H and W divisible by "
                               "blocksize"
                             : "expects [N, C, H, W] with C divisible by "
                               "blocksize^2");
  // The depth tensor's channels c * b * b and spatial h x w.
  const int64_t n = xs[0], c = toDepth ? xs[1] : xs[1] / (b * b),
                h = toDepth ? xs[2] / b : xs[2],
                w = toDepth ? xs[3] / b : xs[3];
  shape::Shape out = toDepth ? shape::Shape{n, c * b * b, h, w}
                             : shape::Shape{n, c, h * b, w * b};
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  const bool dcr = mode == "DCR";
  dispatchBySize(dtypeSize(x.dtype), [&]<typename T>() {
    const T *src = x.as<T>();
    T *dst = ctx.output(0).as<T>();
    int64_t space = 0;
    for (int64_t in = 0; in < n; ++in)
      for (int64_t ic = 0; ic < c; ++ic)
        for (int64_t oh = 0; oh < h * b; ++oh)
          for (int64_t ow = 0; ow < w * b; ++ow, ++space) {
            int64_t i = oh % b, j = ow % b;
            int64_t sc = dcr ? (i * b + j) * c + ic : ic * b * b + i * b + j;
            int64_t depth = ((in * c * b * b + sc) * h + oh / b) * w + ow / b;
            if (toDepth)
              dst[depth] = src[space];
            else
              dst[space] = src[depth];
          }
  });
  return Status::ok();
}

Status depthToSpaceKernel(KernelContext &ctx) {
  return blockShuffle(ctx, false);
}
Status spaceToDepthKernel(KernelContext &ctx) {
  return blockShuffle(ctx, true);
}

Status oneHotKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 3, 1); !s)
    return s;
  const KernelInput &idx = ctx.input(0), &vals = ctx.input(1);
  if (Status s = ctx.expectInputDType(0, {DType::I64, DType::I32, DType::F32});
      !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {vals.dtype}); !s)
    return s;
  int64_t depth, axis;
  if (ctx.hasInput(2)) { // a run-time depth, truncated as ONNX casts it
    const KernelInput &d = ctx.input(2);
    if (Status s =
            ctx.expectInputDType(2, {DType::I64, DType::I32, DType::F32});
        !s)
      return s;
    if (d.numElements() != 1)
      return ctx.error("depth must hold one value, got " +
                       std::to_string(d.numElements()));
    depth = readInt(d, 0);
    if (depth < 1)
      return ctx.error("depth " + std::to_string(depth) + " is not positive");
  } else if (Status s = ctx.attrInt("depth", &depth); !s) {
    return s;
  }
  if (Status s = ctx.attrInt("axis", &axis, -1); !s)
    return s;
  int64_t rank = idx.shape.size();
  if (axis < 0)
    axis += rank + 1;
  if (axis < 0 || axis > rank || vals.numElements() != 2)
    return ctx.error("axis out of range or values not [off, on]");
  shape::Shape out = idx.shape;
  out.insert(out.begin() + axis, depth);
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  const int64_t outer = dimProduct(idx.shape, 0, axis);
  const int64_t inner = dimProduct(idx.shape, axis, rank);
  dispatchBySize(dtypeSize(vals.dtype), [&]<typename T>() {
    const T off = vals.as<T>()[0], on = vals.as<T>()[1];
    T *dst = ctx.output(0).as<T>();
    std::fill(dst, dst + outer * depth * inner, off);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = readInt(idx, o * inner + i);
        if (v < 0)
          v += depth;
        if (v >= 0 && v < depth)
          dst[(o * depth + v) * inner + i] = on;
      }
  });
  return Status::ok();
}

Status nonZeroKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::I64}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  const int64_t total = x.numElements(), rank = x.shape.size();
  const size_t es = dtypeSize(x.dtype);
  auto nonZero = [&](int64_t i) {
    if (x.dtype == DType::F32)
      return x.as<float>()[i] != 0.0f;
    const auto *p = static_cast<const uint8_t *>(x.data) + i * es;
    for (size_t b = 0; b < es; ++b)
      if (p[b])
        return true;
    return false;
  };
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < total; ++i)
    if (nonZero(i))
      hits.push_back(i);
  const int64_t n = hits.size();
  if (Status s = ctx.setOutputShape(0, {rank, n}); !s)
    return s;
  int64_t *dst = ctx.output(0).as<int64_t>();
  for (int64_t j = 0; j < n; ++j) {
    int64_t flat = hits[j];
    for (int64_t d = rank; d-- > 0;) {
      dst[d * n + j] = flat % x.shape[d];
      flat /= x.shape[d];
    }
  }
  return Status::ok();
}

} // namespace

void addTensorCoverageKernels(std::vector<KernelImpl> &table) {
  table.push_back({"flatten", flattenKernel});
  table.push_back({"expand", expandKernel});
  table.push_back({"tile", tileKernel});
  table.push_back({"range", rangeKernel});
  table.push_back({"depth_to_space", depthToSpaceKernel});
  table.push_back({"space_to_depth", spaceToDepthKernel});
  table.push_back({"one_hot", oneHotKernel});
  table.push_back({"non_zero", nonZeroKernel});
  addTensorSliceKernels(table);
  addTensorIndexKernels(table);
  addGatherNDKernels(table);
  addConvKernels(table);
  addConvTransposeKernels(table);
  addLstmKernels(table);
  addGruKernels(table);
  addPoolKernels(table);
  addResizeKernels(table);
  addControlFlowKernels(table);
  addNonMaxSuppressionKernels(table);
}

} // namespace ingot::cpu
