//===- DataMovement.cpp - reshape, squeeze, unsqueeze, concat, gather -----===//
//
// Dtype-agnostic: these move bytes. reshape/squeeze/unsqueeze are in-place
// (the planner may give the output the input's memory), so they only copy
// when the buffers differ.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

namespace ingot::cpu {
namespace {

/// Sets the output shape and moves the input's bytes there unless the
/// output already is the input.
Status viewAs(KernelContext &ctx, const shape::Shape &outShape) {
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  void *out = ctx.output(0).data;
  if (out != x.data && x.bytes())
    std::memmove(out, x.data, x.bytes());
  return Status::ok();
}

Status reshapeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  std::vector<int64_t> target;
  if (Status s = readIndexVector(ctx, 1, &target); !s)
    return s;
  int64_t allowZero;
  if (Status s = ctx.attrInt("allowzero", &allowZero, 0); !s)
    return s;
  shape::Shape outShape;
  std::string err;
  if (!shape::reshape(ctx.input(0).shape, target, allowZero != 0, &outShape,
                      &err))
    return ctx.error(err);
  return viewAs(ctx, outShape);
}

/// Axes from the attr, or (opset 13+) from an optional second input.
Status axesOperand(const KernelContext &ctx, std::vector<int64_t> *axes,
                   bool required) {
  if (ctx.hasInput(1))
    return readIndexVector(ctx, 1, axes);
  if (required)
    return ctx.attrInts("axes", axes);
  return ctx.attrInts("axes", axes, std::vector<int64_t>{});
}

Status squeezeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 2, 1); !s)
    return s;
  std::vector<int64_t> axes;
  if (Status s = axesOperand(ctx, &axes, false); !s)
    return s;
  shape::Shape outShape;
  std::string err;
  if (!shape::squeeze(ctx.input(0).shape, axes, &outShape, &err))
    return ctx.error(err);
  return viewAs(ctx, outShape);
}

Status unsqueezeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 2, 1); !s)
    return s;
  std::vector<int64_t> axes;
  if (Status s = axesOperand(ctx, &axes, true); !s)
    return s;
  shape::Shape outShape;
  std::string err;
  if (!shape::unsqueeze(ctx.input(0).shape, axes, &outShape, &err))
    return ctx.error(err);
  return viewAs(ctx, outShape);
}

Status concatKernel(KernelContext &ctx) {
  const size_t n = ctx.numInputs();
  if (n == 0 || ctx.numOutputs() != 1)
    return ctx.error("expects at least one input and one output");
  std::vector<shape::Shape> shapes;
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.hasInput(i))
      return ctx.error("input " + std::to_string(i) + " is missing");
    if (ctx.input(i).dtype != ctx.input(0).dtype)
      return ctx.error("input " + std::to_string(i) + " '" + ctx.input(i).name +
                       "' is " + dtypeName(ctx.input(i).dtype) +
                       ", input 0 is " + dtypeName(ctx.input(0).dtype));
    shapes.push_back(ctx.input(i).shape);
  }
  if (Status s = ctx.expectOutputDType(0, {ctx.input(0).dtype}); !s)
    return s;
  int64_t axisAttr, axis;
  if (Status s = ctx.attrInt("axis", &axisAttr); !s)
    return s;
  shape::Shape outShape;
  std::string err;
  if (!shape::concat(shapes, axisAttr, &outShape, &err))
    return ctx.error(err);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  shape::normalizeAxis(axisAttr, outShape.size(), &axis);
  const size_t es = dtypeSize(ctx.input(0).dtype);
  const int64_t outer = dimProduct(outShape, 0, axis);
  const int64_t inner = dimProduct(outShape, axis + 1, outShape.size());
  const int64_t outRow = outShape[axis] * inner * es; // bytes per outer index
  auto *out = static_cast<uint8_t *>(ctx.output(0).data);
  std::vector<std::vector<uint8_t>> scratch(n);
  std::vector<const uint8_t *> src(n);
  std::vector<int64_t> rowBytes(n), colOffset(n);
  int64_t col = 0;
  for (size_t i = 0; i < n; ++i) {
    const KernelInput &x = ctx.input(i);
    src[i] = static_cast<const uint8_t *>(x.data);
    rowBytes[i] = x.shape[axis] * inner * es;
    colOffset[i] = col;
    col += rowBytes[i];
    // The planner placed this input where it belongs in y (its producer
    // wrote it there): nothing to copy.
    if (outer == 1 && src[i] == out + colOffset[i]) {
      rowBytes[i] = 0;
      continue;
    }
    if (rangesOverlap(x.data, x.bytes(), out, outer * outRow)) { // defensive
      scratch[i].assign(src[i], src[i] + x.bytes());
      src[i] = scratch[i].data();
    }
  }
  ctx.parallelFor(outer,
                  std::max<int64_t>(1, kElementwiseGrain * 4 /
                                           std::max<int64_t>(outRow, 1)),
                  [&](int64_t b, int64_t e) {
                    for (int64_t o = b; o < e; ++o)
                      for (size_t i = 0; i < n; ++i)
                        if (rowBytes[i])
                          std::memcpy(out + o * outRow + colOffset[i],
                                      src[i] + o * rowBytes[i], rowBytes[i]);
                  });
  return Status::ok();
}

/// The int32/int64 indices of a gather along an axis of `dimLen`,
/// negative ones counted from the end; an index outside is an error.
Status gatherIndices(const KernelContext &ctx, const KernelInput &idx,
                     int64_t dimLen, int64_t axis, std::vector<int64_t> *out) {
  const int64_t count = idx.numElements();
  out->resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = idx.dtype == DType::I64 ? idx.as<int64_t>()[i]
                                        : int64_t(idx.as<int32_t>()[i]);
    if (v < -dimLen || v >= dimLen)
      return ctx.error("index " + std::to_string(v) + " at position " +
                       std::to_string(i) + " is out of range for axis " +
                       std::to_string(axis) + " of size " +
                       std::to_string(dimLen));
    (*out)[i] = v < 0 ? v + dimLen : v;
  }
  return Status::ok();
}

/// Rows of a quantised [V, E] table (an embedding stored as a GGUF keeps
/// it), decoded into f32: a token reads one row of blocks, so the table
/// stays at its stored size in memory.
Status gatherQuantRows(KernelContext &ctx, const KernelInput &data,
                       const KernelInput &idx) {
  int64_t axis;
  if (Status s = ctx.attrInt("axis", &axis, 0); !s)
    return s;
  if (data.shape.size() != 2 || axis != 0 || data.groupSize < 1)
    return ctx.error("quantised table '" + data.name + "' (" +
                     dtypeName(data.dtype) + ") must be 2-D, gathered on " +
                     "axis 0, with a group size >= 1");
  if (data.layout != "row-major" &&
      (data.layout != "q16" ||
       !q16Unsupported(data.dtype, data.shape[0], data.shape[1], data.groupSize)
            .empty()))
    return ctx.error("quantised table '" + data.name + "' is stored as \"" +
                     std::string(data.layout) + "\", which gather cannot read");
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const int64_t k = data.shape[1];
  const int64_t count = idx.numElements();
  std::vector<int64_t> indices;
  if (Status s = gatherIndices(ctx, idx, data.shape[0], 0, &indices); !s)
    return s;
  shape::Shape outShape = idx.shape;
  outShape.push_back(k);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  const int64_t rowBytes = quantRowBytes(data.dtype, k, data.groupSize);
  const auto *src = static_cast<const uint8_t *>(data.data);
  float *out = ctx.output(0).as<float>();
  const bool q16 = data.layout == "q16";
  ctx.parallelFor(
      count, std::max<int64_t>(1, kElementwiseGrain / k),
      [&](int64_t b, int64_t e) {
        // A "q16" row is spread over its panel: gathered into
        // row-major blocks first.
        std::vector<uint8_t> row(q16 ? size_t(rowBytes) : 0);
        for (int64_t t = b; t < e; ++t) {
          const uint8_t *blocks = src + indices[t] * rowBytes;
          if (q16) {
            unpackQ16Row(data.dtype, src, k, data.groupSize, indices[t],
                         row.data());
            blocks = row.data();
          }
          dequantizeRow(data.dtype, data.groupSize, blocks, k, out + t * k);
        }
      });
  return Status::ok();
}

Status gatherKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(1, {DType::I64, DType::I32}); !s)
    return s;
  const KernelInput &data = ctx.input(0), &idx = ctx.input(1);
  if (isQuantDType(data.dtype))
    return gatherQuantRows(ctx, data, idx);
  if (data.layout != "row-major")
    return ctx.error("table '" + data.name + "' is stored as \"" +
                     std::string(data.layout) + "\", which gather cannot read");
  if (Status s = ctx.expectOutputDType(0, {data.dtype}); !s)
    return s;
  int64_t axisAttr, axis;
  if (Status s = ctx.attrInt("axis", &axisAttr, 0); !s)
    return s;
  shape::Shape outShape;
  std::string err;
  if (!shape::gather(data.shape, idx.shape, axisAttr, &outShape, &err))
    return ctx.error(err);
  shape::normalizeAxis(axisAttr, data.shape.size(), &axis);
  const int64_t dimLen = data.shape[axis];
  const int64_t count = idx.numElements();
  std::vector<int64_t> indices;
  if (Status s = gatherIndices(ctx, idx, dimLen, axis, &indices); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  const size_t es = dtypeSize(data.dtype);
  const int64_t outer = dimProduct(data.shape, 0, axis);
  const int64_t block =
      dimProduct(data.shape, axis + 1, data.shape.size()) * es;
  if (block == 0 || outer * count == 0)
    return Status::ok();
  const auto *src = static_cast<const uint8_t *>(data.data);
  auto *out = static_cast<uint8_t *>(ctx.output(0).data);
  std::vector<uint8_t> scratch;
  if (rangesOverlap(src, data.bytes(), out,
                    size_t(outer * count * block))) { // defensive
    scratch.assign(src, src + data.bytes());
    src = scratch.data();
  }
  // One task per (outer, index) pair: each copies one contiguous block.
  ctx.parallelFor(
      outer * count,
      std::max<int64_t>(1, kElementwiseGrain * 4 / std::max<int64_t>(block, 1)),
      [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          int64_t o = t / count, j = t % count;
          std::memcpy(out + t * block, src + (o * dimLen + indices[j]) * block,
                      block);
        }
      });
  return Status::ok();
}

} // namespace

void addDataMovementKernels(std::vector<KernelImpl> &table) {
  table.push_back({"reshape", reshapeKernel});
  table.push_back({"squeeze", squeezeKernel});
  table.push_back({"unsqueeze", unsqueezeKernel});
  table.push_back({"concat", concatKernel});
  table.push_back({"gather", gatherKernel});
}

} // namespace ingot::cpu
