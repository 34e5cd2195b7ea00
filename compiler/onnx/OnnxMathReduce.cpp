//===- OnnxMathReduce.cpp - Reduction, LogSoftmax and CumSum converters --===//
//
// Reduce*, ArgMax/ArgMin, LogSoftmax and CumSum; the table that registers
// them is in OnnxMathOps.cpp. Axes not known at compile time are read by
// the kernels at run time.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

namespace {

/// Reduce axes given as input `i`: `axes` when known at compile time,
/// else `runtime` is the i64 tensor the kernel reads when it runs (as
/// onnxruntime does; bound computation sizes the result).
LogicalResult reduceAxesInput(NodeContext &n, int i, std::vector<int64_t> &axes,
                              Value &runtime) {
  if (std::optional<std::vector<int64_t>> known =
          n.ctx.initializerInts(n.node.input(i))) {
    axes = std::move(*known);
    return success();
  }
  if (failed(n.input(i, runtime)) ||
      failed(n.requireType(runtime, "axes", {n.i64()})))
    return failure();
  if (std::optional<std::vector<int64_t>> known = n.ctx.constantInts(runtime)) {
    axes = std::move(*known);
    runtime = nullptr;
    return success();
  }
  if (cast<RankedTensorType>(runtime.getType()).getRank() != 1)
    return n.fail("axes of shape " +
                      shape::toString(graph::shapeOf(runtime.getType())),
                  "a 1-D axes tensor");
  return success();
}

} // namespace

/// Shared by every Reduce* (ReduceMean too, when its axes come at run
/// time): axes from the attribute before `axesInputFrom`, from the optional
/// second input after, with noop_with_empty_axes from the same opset.
LogicalResult convertReduceKind(NodeContext &n, StringRef kind, bool ints,
                                int64_t axesInputFrom) {
  Value x, runtimeAxes;
  SmallVector<Type> allowed = numericTypes(n, ints);
  if ((kind == "max" || kind == "min") && n.opset() >= 20)
    allowed.push_back(n.i1()); // any / all
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input", allowed)))
    return failure();
  std::vector<int64_t> axes;
  bool noopWhenEmpty = false;
  if (n.opset() < axesInputFrom) {
    axes = n.attrInts("axes");
  } else {
    noopWhenEmpty = n.attrInt("noop_with_empty_axes", 0) != 0;
    if (n.hasInput(1) && failed(reduceAxesInput(n, 1, axes, runtimeAxes)))
      return failure();
  }
  int64_t keepdims = n.attrInt("keepdims", 1);
  if (n.ctx.hasError())
    return failure();
  if (!runtimeAxes && axes.empty() && noopWhenEmpty)
    return n.setOutput(0, x);
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  for (int64_t axis : axes) {
    int64_t normalized;
    if (failed(n.normalizeAxis(axis, rank, "axis", normalized)))
      return failure();
  }
  OpBuilder &b = n.builder();
  IntegerAttr noop;
  if (runtimeAxes)
    noop = b.getI64IntegerAttr(noopWhenEmpty);
  return n.setOutput(0, n.build<graph::ReduceOp>(
                            elementTypeOf(x), x, runtimeAxes,
                            b.getStringAttr(kind), b.getDenseI64ArrayAttr(axes),
                            b.getI64IntegerAttr(keepdims != 0), noop));
}

namespace {

LogicalResult convertArgReduce(NodeContext &n, StringRef kind) {
  Value x;
  if (failed(n.input(0, x)) ||
      failed(n.requireType(x, "input", numericTypes(n))))
    return failure();
  int64_t axis = n.attrInt("axis", 0), normalized;
  int64_t keepdims = n.attrInt("keepdims", 1);
  int64_t last = n.attrInt("select_last_index", 0);
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (n.ctx.hasError() || failed(n.normalizeAxis(axis, rank, "axis", normalized)))
    return failure();
  OpBuilder &b = n.builder();
  return n.setOutput(0, n.build<graph::ArgReduceOp>(
                            n.i64(), x, b.getStringAttr(kind),
                            b.getI64IntegerAttr(axis),
                            b.getI64IntegerAttr(keepdims != 0),
                            b.getI64IntegerAttr(last != 0)));
}

} // namespace

LogicalResult convertReduceSum(NodeContext &n) {
  return convertReduceKind(n, "sum", true, 13);
}
LogicalResult convertReduceMax(NodeContext &n) {
  return convertReduceKind(n, "max", true, 18);
}
LogicalResult convertReduceMin(NodeContext &n) {
  return convertReduceKind(n, "min", true, 18);
}
LogicalResult convertReduceProd(NodeContext &n) {
  return convertReduceKind(n, "prod", true, 18);
}
LogicalResult convertReduceL2(NodeContext &n) {
  return convertReduceKind(n, "l2", false, 18);
}
LogicalResult convertReduceSumSquare(NodeContext &n) {
  return convertReduceKind(n, "sum_square", false, 18);
}
LogicalResult convertReduceLogSumExp(NodeContext &n) {
  return convertReduceKind(n, "log_sum_exp", false, 18);
}

LogicalResult convertArgMax(NodeContext &n) { return convertArgReduce(n, "max"); }
LogicalResult convertArgMin(NodeContext &n) { return convertArgReduce(n, "min"); }

LogicalResult convertLogSoftmax(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input", {n.f32()})))
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t axis = n.attrInt("axis", n.opset() >= 13 ? -1 : 1), normalized;
  if (n.ctx.hasError() || failed(n.normalizeAxis(axis, rank, "axis", normalized)))
    return failure();
  // Before opset 13 over the dims from `axis` on, flattened.
  return n.setOutput(0, softmaxOverTrailingDims(n, x, normalized, true));
}

/// CumSum: a constant axis becomes the attribute; any other is read by the
/// kernel at run time (the result shape does not depend on it).
LogicalResult convertCumSum(NodeContext &n) {
  Value x, axisValue;
  if (failed(n.input(0, x)) ||
      failed(n.requireType(x, "input", numericTypes(n))))
    return failure();
  // An initializer axis is read directly, leaving no dead constant behind.
  std::optional<std::vector<int64_t>> known;
  if (n.hasInput(1))
    known = n.ctx.initializerInts(n.node.input(1));
  if (!known) {
    if (failed(n.input(1, axisValue)) ||
        failed(n.requireType(axisValue, "axis", {n.i64(), n.i32()})))
      return failure();
    known = n.ctx.constantInts(axisValue);
  }
  int64_t exclusive = n.attrInt("exclusive", 0), reverse = n.attrInt("reverse", 0);
  if (n.ctx.hasError())
    return failure();
  OpBuilder &b = n.builder();
  IntegerAttr axisAttr;
  if (known) {
    if (known->size() != 1)
      return n.fail("axis must hold one value", "a scalar or 1-element axis");
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank(), normalized;
    if (failed(n.normalizeAxis((*known)[0], rank, "axis", normalized)))
      return failure();
    axisAttr = b.getI64IntegerAttr((*known)[0]);
    axisValue = nullptr;
  } else if (cast<RankedTensorType>(axisValue.getType()).getNumElements() != 1) {
    return n.fail("axis of shape " +
                      shape::toString(graph::shapeOf(axisValue.getType())),
                  "a scalar or 1-element axis");
  }
  return n.setOutput(0, n.build<graph::CumSumOp>(
                            elementTypeOf(x), x, axisValue, axisAttr,
                            b.getI64IntegerAttr(exclusive != 0),
                            b.getI64IntegerAttr(reverse != 0)));
}

} // namespace ingot::compiler::onnximport
