//===- OnnxShapeOps.cpp - Data movement and shape ONNX ops ----------------===//
//
// Transpose, Reshape, Squeeze, Unsqueeze, Concat, Gather, Shape and Trilu.
// Axes inputs known at compile time become attributes (Squeeze/Unsqueeze
// axes only known at run time: OnnxRunTimeAxes.cpp); Reshape's shape and
// Trilu's k stay run-time operands.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

#include <limits>
#include <numeric>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// Compile-time indices must lie inside a static gathered dim: otherwise the
/// node would only fail at run time, or leave a later node blamed for a
/// shape the out-of-range entry kept from being known.
LogicalResult checkConstantIndices(NodeContext &n, Value data, Value indices,
                                   int64_t axis, int64_t normalized) {
  int64_t size = cast<RankedTensorType>(data.getType()).getDimSize(normalized);
  if (ShapedType::isDynamic(size))
    return success();
  std::optional<std::vector<int64_t>> values = n.ctx.constantInts(indices);
  if (!values)
    return success();
  for (int64_t index : *values)
    if (index < -size || index >= size)
      return n.fail("index " + std::to_string(index) + " (of indices '" +
                        n.node.input(1) + "') is out of range for axis " +
                        std::to_string(axis) + " of size " +
                        std::to_string(size) + " (data '" + n.node.input(0) +
                        "')",
                    "indices in [" + std::to_string(-size) + ", " +
                        std::to_string(size - 1) + "]");
  return success();
}

} // namespace

/// Transpose: an absent perm reverses the dims; it is written out
/// explicitly so later passes see one form.
LogicalResult convertTranspose(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  std::vector<int64_t> perm = n.attrInts("perm");
  if (n.ctx.hasError())
    return failure();
  if (!n.attr("perm", onnx::AttributeProto::INTS)) {
    perm.resize(rankOf(x));
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  return n.setOutput(
      0, n.build<graph::TransposeOp>(elementTypeOf(x), x,
                                     n.builder().getDenseI64ArrayAttr(perm)));
}

/// Reshape: the int64 shape input stays an operand, constant or not
/// (allowzero from opset 14).
LogicalResult convertReshape(NodeContext &n) {
  Value data, shape;
  if (failed(n.input(0, data)) || failed(n.input(1, shape)) ||
      failed(n.requireType(shape, "shape", {n.i64()})))
    return failure();
  int64_t allowZero = n.opset() >= 14 ? n.attrInt("allowzero", 0) : 0;
  if (n.ctx.hasError())
    return failure();
  return n.setOutput(0, n.build<graph::ReshapeOp>(
                            elementTypeOf(data), data, shape,
                            n.builder().getI64IntegerAttr(allowZero != 0)));
}

/// An axes input (opset 13+) whose values only the run knows, or null.
Value runTimeAxes(NodeContext &n) {
  Value axes;
  if (n.opset() < 13 || !n.hasInput(1) || failed(n.input(1, axes)) ||
      n.ctx.constantInts(axes))
    return nullptr;
  return axes;
}

/// Squeeze: the optional axes (a constant input from opset 13, an attribute
/// before); without them every static 1 is removed.

LogicalResult convertSqueeze(NodeContext &n) {
  Value x;
  std::vector<int64_t> axes;
  bool given;
  if (failed(n.input(0, x)))
    return failure();
  if (Value runTime = runTimeAxes(n))
    return squeezeRunTimeAxes(n, x, runTime);
  if (failed(intsOperand(n, 1, "axes", 13, false, axes, given)))
    return failure();
  return n.setOutput(
      0, n.build<graph::SqueezeOp>(elementTypeOf(x), x,
                                   n.builder().getDenseI64ArrayAttr(axes)));
}

/// Unsqueeze: the axes are required (a constant input from opset 13, an
/// attribute before).
LogicalResult convertUnsqueeze(NodeContext &n) {
  Value x;
  std::vector<int64_t> axes;
  bool given;
  if (failed(n.input(0, x)))
    return failure();
  if (Value runTime = runTimeAxes(n))
    return unsqueezeRunTimeAxes(n, x, runTime);
  if (failed(intsOperand(n, 1, "axes", 13, true, axes, given)))
    return failure();
  return n.setOutput(
      0, n.build<graph::UnsqueezeOp>(elementTypeOf(x), x,
                                     n.builder().getDenseI64ArrayAttr(axes)));
}

/// Concat: joins all inputs along the required `axis`.
LogicalResult convertConcat(NodeContext &n) {
  SmallVector<Value> inputs;
  for (int i = 0; i < n.node.input_size(); ++i) {
    Value v;
    if (failed(n.input(i, v)))
      return failure();
    inputs.push_back(v);
  }
  if (inputs.empty())
    return n.fail("Concat needs at least one input");
  for (Value v : inputs)
    if (failed(n.requireType(v, "every input", {elementTypeOf(inputs[0])})))
      return failure();
  if (!n.attr("axis", onnx::AttributeProto::INT))
    return n.ctx.hasError() ? failure() : n.fail("missing attribute 'axis'");
  int64_t axis = n.attrInt("axis", 0), normalized;
  if (failed(n.normalizeAxis(axis, rankOf(inputs[0]), "axis", normalized)))
    return failure();
  return n.setOutput(
      0, n.build<graph::ConcatOp>(elementTypeOf(inputs[0]), ValueRange(inputs),
                                  n.builder().getI64IntegerAttr(axis)));
}

/// Gather: slices of `data` along `axis` picked by int64/int32 indices.
LogicalResult convertGather(NodeContext &n) {
  Value data, indices;
  if (failed(n.input(0, data)) || failed(n.input(1, indices)) ||
      failed(n.requireType(indices, "indices", {n.i64(), n.i32()})))
    return failure();
  int64_t axis = n.attrInt("axis", 0), normalized;
  if (n.ctx.hasError() ||
      failed(n.normalizeAxis(axis, rankOf(data), "axis", normalized)) ||
      failed(checkConstantIndices(n, data, indices, axis, normalized)))
    return failure();
  return n.setOutput(
      0, n.build<graph::GatherOp>(elementTypeOf(data), data, indices,
                                  n.builder().getI64IntegerAttr(axis)));
}

/// Shape: the input's dims as int64 (start/end from opset 15).
/// GatherND: int64 index tuples of static length (the shape rule checks
/// that they fit the data).
LogicalResult convertGatherND(NodeContext &n) {
  Value data, indices;
  if (failed(n.input(0, data)) || failed(n.input(1, indices)) ||
      failed(n.requireType(indices, "indices", {n.i64()})))
    return failure();
  int64_t batchDims = n.attrInt("batch_dims", 0);
  if (n.ctx.hasError())
    return failure();
  return n.setOutput(
      0, n.build<graph::GatherNDOp>(elementTypeOf(data), data, indices,
                                    n.builder().getI64IntegerAttr(batchDims)));
}

LogicalResult convertShape(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  int64_t start = 0, end = std::numeric_limits<int64_t>::max();
  if (n.opset() >= 15) {
    start = n.attrInt("start", start);
    end = n.attrInt("end", end);
  }
  if (n.ctx.hasError())
    return failure();
  OpBuilder &b = n.builder();
  return n.setOutput(0, n.build<graph::ShapeOp>(n.i64(), x,
                                                b.getI64IntegerAttr(start),
                                                b.getI64IntegerAttr(end)));
}

/// Size: the product of the input's shape, a 0-d int64 (the shape rule
/// evaluates it when the dims are known).
LogicalResult convertSize(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  if (auto t = cast<RankedTensorType>(x.getType()); t.hasStaticShape())
    return n.setOutput(0,
                       scalarConstant(n, n.i64(), double(t.getNumElements())));
  OpBuilder &b = n.builder();
  FailureOr<Value> shapeOfX = n.build<graph::ShapeOp>(
      n.i64(), x, b.getI64IntegerAttr(0),
      b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
  if (failed(shapeOfX))
    return failure();
  return n.setOutput(0, n.build<graph::ReduceOp>(
                            n.i64(), *shapeOfX, Value(),
                            b.getStringAttr("prod"), b.getDenseI64ArrayAttr({}),
                            b.getI64IntegerAttr(0), IntegerAttr()));
}

/// Trilu (14+): keeps a triangle of the last two dims; k stays an operand.
LogicalResult convertTrilu(NodeContext &n) {
  Value x, k;
  if (failed(n.input(0, x)) || failed(n.optionalInput(1, k)) ||
      (k && failed(n.requireType(k, "k", {n.i64()}))))
    return failure();
  if (rankOf(x) < 2)
    return n.fail("Trilu on a rank-" + std::to_string(rankOf(x)) + " input",
                  "inputs of rank 2 or more");
  int64_t upper = n.attrInt("upper", 1);
  if (n.ctx.hasError())
    return failure();
  return n.setOutput(
      0, n.build<graph::TriluOp>(elementTypeOf(x), x, k,
                                 n.builder().getI64IntegerAttr(upper != 0)));
}

} // namespace ingot::compiler::onnximport
