//===- OnnxSplit.cpp - Split as one slice per output ----------------------===//
//
// Sizes known at compile time give constant slices; a dynamic dim split in
// equal parts and sizes that come at run time give slices whose bounds are
// shape arithmetic evaluated when the plan runs.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

namespace {

/// Equal parts of a dynamic dim: the chunk (ceil(d / parts) from 18, d /
/// parts before) is computed from the run-time dim with shape arithmetic,
/// which folds wherever the dim becomes known (bounds included).
LogicalResult splitDynamicDim(NodeContext &n, Value x, int64_t axis,
                              int64_t parts) {
  OpBuilder &b = n.builder();
  Type i64 = n.i64();
  FailureOr<Value> dim = n.build<graph::ShapeOp>(
      i64, x, b.getI64IntegerAttr(axis), b.getI64IntegerAttr(axis + 1));
  if (failed(dim))
    return failure();
  Value chunk = *dim;
  if (n.opset() >= 18) {
    FailureOr<Value> up =
        n.build<graph::AddOp>(i64, chunk, tensorI64Constant(n, {parts - 1}));
    if (failed(up))
      return failure();
    chunk = *up;
  }
  FailureOr<Value> divided =
      n.build<graph::DivOp>(i64, chunk, tensorI64Constant(n, {parts}));
  if (failed(divided))
    return failure();
  Value axes = tensorI64Constant(n, {axis}), steps = tensorI64Constant(n, {1});
  for (int64_t i = 0; i < parts; ++i) {
    FailureOr<Value> starts =
        n.build<graph::MulOp>(i64, *divided, tensorI64Constant(n, {i}));
    FailureOr<Value> ends =
        n.build<graph::MulOp>(i64, *divided, tensorI64Constant(n, {i + 1}));
    if (failed(starts) || failed(ends) ||
        failed(
            n.setOutput(i, n.build<graph::SliceOp>(elementTypeOf(x), x, *starts,
                                                   *ends, axes, steps))))
      return failure();
  }
  return success();
}

/// Split sizes known only when the plan runs (a graph input, or computed
/// from one): output i is x[begin_i, begin_i + s_i) along the axis, the
/// begins an exclusive CumSum of the sizes. Each output is bounded by the
/// input dim, as any run-time Slice is.
LogicalResult splitRuntimeSizes(NodeContext &n, Value x, Value sizes,
                                int64_t axis) {
  int64_t outputs = n.node.output_size();
  auto type = cast<RankedTensorType>(sizes.getType());
  // A length only known at run time must match there (Slice checks it).
  if (type.getRank() != 1 ||
      (!type.isDynamicDim(0) && type.getDimSize(0) != outputs))
    return n.fail("split of shape " + shape::toString(graph::shapeOf(type)) +
                      " for " + std::to_string(outputs) + " outputs",
                  "a 1-D split with one size per output");
  OpBuilder &b = n.builder();
  Type i64 = n.i64();
  auto cumsum = [&](bool exclusive) {
    return n.build<graph::CumSumOp>(i64, sizes, Value(), b.getI64IntegerAttr(0),
                                    b.getI64IntegerAttr(exclusive),
                                    b.getI64IntegerAttr(0));
  };
  FailureOr<Value> begins = cumsum(true), ends = cumsum(false);
  if (failed(begins) || failed(ends))
    return failure();
  Value zero = tensorI64Constant(n, {0}), one = tensorI64Constant(n, {1});
  Value axes = tensorI64Constant(n, {axis});
  for (int64_t i = 0; i < outputs; ++i) {
    Value at = tensorI64Constant(n, {i}), next = tensorI64Constant(n, {i + 1});
    FailureOr<Value> begin =
        n.build<graph::SliceOp>(i64, *begins, at, next, zero, one);
    FailureOr<Value> end =
        n.build<graph::SliceOp>(i64, *ends, at, next, zero, one);
    if (failed(begin) || failed(end) ||
        failed(
            n.setOutput(i, n.build<graph::SliceOp>(elementTypeOf(x), x, *begin,
                                                   *end, axes, one))))
      return failure();
  }
  return success();
}

/// The `split` input when its values are not known at compile time.
Value runtimeSplitSizes(NodeContext &n) {
  if (n.opset() < 13 || !n.hasInput(1) ||
      n.ctx.initializerInts(n.node.input(1)))
    return nullptr;
  Value sizes;
  if (failed(n.input(1, sizes)) || !elementTypeOf(sizes).isInteger(64) ||
      n.ctx.constantInts(sizes))
    return nullptr; // constantInts reports any error
  return sizes;
}

} // namespace

/// Split: one slice per output; sizes from the `split` input (13+; read
/// at run time when not constant), else `num_outputs` (18+, the last chunk
/// may be smaller) or the output count (equal parts); a dynamic dim is
/// split with run-time arithmetic.
LogicalResult convertSplit(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  int64_t rank = rankOf(x), axis;
  if (failed(n.normalizeAxis(n.attrInt("axis", 0), rank, "axis", axis)))
    return failure();
  if (Value runtime = runtimeSplitSizes(n))
    return splitRuntimeSizes(n, x, runtime, axis);
  int64_t outputs = n.node.output_size();
  std::vector<int64_t> sizes;
  bool given;
  if (failed(intsOperand(n, 1, "split", 13, false, sizes, given)))
    return failure();
  if (given) {
    if (int64_t(sizes.size()) != outputs)
      return n.fail("split has " + std::to_string(sizes.size()) +
                    " entries for " + std::to_string(outputs) + " outputs");
  } else {
    int64_t parts =
        n.opset() >= 18 ? n.attrInt("num_outputs", outputs) : outputs;
    if (n.ctx.hasError())
      return failure();
    if (parts != outputs || parts < 1)
      return n.fail("num_outputs " + std::to_string(parts) + " but " +
                    std::to_string(outputs) + " outputs");
    int64_t dim = cast<RankedTensorType>(x.getType()).getDimSize(axis);
    if (ShapedType::isDynamic(dim))
      return splitDynamicDim(n, x, axis, parts);
    int64_t chunk = n.opset() >= 18 ? (dim + parts - 1) / parts : dim / parts;
    if (n.opset() < 18 && dim % parts != 0)
      return n.fail("dim " + std::to_string(dim) + " does not split into " +
                    std::to_string(parts) + " equal parts");
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  Value axes = tensorI64Constant(n, {axis}), steps = tensorI64Constant(n, {1});
  int64_t begin = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    Value starts = tensorI64Constant(n, {begin});
    Value ends = tensorI64Constant(n, {begin + sizes[i]});
    begin += sizes[i];
    if (failed(
            n.setOutput(i, n.build<graph::SliceOp>(elementTypeOf(x), x, starts,
                                                   ends, axes, steps))))
      return failure();
  }
  return success();
}

} // namespace ingot::compiler::onnximport
