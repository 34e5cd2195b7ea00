//===- OnnxOpsetForms.cpp - Operands written as attributes before 10–13 ---===//
//
// Opsets 7–12 (PaddleOCR, older TensorFlow and PyTorch exporters) give some
// operands as attributes that later opsets take as inputs: Squeeze/
// Unsqueeze/Split axes and sizes (inputs from 13), Clip bounds and Pad's
// pads and value (from 11), TopK's k and Slice's starts/ends/axes (from
// 10). The helpers here turn those attributes into the constants the
// converters already take, so each op has one converter over its whole
// opset range. Softmax and LogSoftmax before 13 normalise over the input
// coerced to 2-D at `axis`, which softmaxOverTrailingDims spells out.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

Value tensorI64Constant(NodeContext &n, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({int64_t(values.size())}, n.i64());
  return graph::ConstantOp::create(n.builder(), n.loc(), type,
                                   DenseIntElementsAttr::get(type, values));
}

Value scalarConstant(NodeContext &n, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute v = isa<FloatType>(elementType)
                    ? Attribute(FloatAttr::get(elementType, value))
                    : Attribute(IntegerAttr::get(elementType, int64_t(value)));
  return graph::ConstantOp::create(n.builder(), n.loc(), type,
                                   DenseElementsAttr::get(type, v));
}

LogicalResult intsOperand(NodeContext &n, int input, const char *attrName,
                          int64_t inputFromOpset, bool required,
                          std::vector<int64_t> &out, bool &given) {
  given = false;
  if (n.opset() >= inputFromOpset) {
    if (!n.hasInput(input)) {
      if (required)
        return n.fail(std::string("input '") + attrName + "' is required");
      return success();
    }
    given = true;
    return n.constantInts(input, attrName, out);
  }
  if (n.hasInput(input))
    return n.fail(std::string("'") + attrName + "' given as input " +
                      std::to_string(input),
                  std::string("an attribute '") + attrName + "' before opset " +
                      std::to_string(inputFromOpset));
  const onnx::AttributeProto *a = n.attr(attrName, onnx::AttributeProto::INTS);
  if (n.ctx.hasError())
    return failure();
  if (!a) {
    if (required)
      return n.fail(std::string("attribute '") + attrName + "' is required");
    return success();
  }
  given = true;
  out.assign(a->ints().begin(), a->ints().end());
  return success();
}

/// Slice before opset 10: starts, ends and optional axes are attributes.
LogicalResult convertSliceAttributes(NodeContext &n) {
  Value x;
  std::vector<int64_t> starts, ends, axes;
  bool given;
  if (failed(n.input(0, x)) ||
      failed(intsOperand(n, 1, "starts", 10, true, starts, given)) ||
      failed(intsOperand(n, 2, "ends", 10, true, ends, given)) ||
      failed(intsOperand(n, 3, "axes", 10, false, axes, given)))
    return failure();
  if (starts.size() != ends.size() || (given && axes.size() != starts.size()))
    return n.fail("starts, ends and axes of different lengths",
                  "one entry per sliced axis in each");
  if (!given)
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  std::vector<int64_t> steps(starts.size(), 1);
  return n.setOutput(0, n.build<graph::SliceOp>(elementTypeOf(x), x,
                                                tensorI64Constant(n, starts),
                                                tensorI64Constant(n, ends),
                                                tensorI64Constant(n, axes),
                                                tensorI64Constant(n, steps)));
}

FailureOr<Value> softmaxOverTrailingDims(NodeContext &n, Value x, int64_t axis,
                                         bool logSoftmax) {
  OpBuilder &b = n.builder();
  auto build = [&](Value in, int64_t along) -> FailureOr<Value> {
    if (logSoftmax)
      return n.build<graph::LogSoftmaxOp>(n.f32(), in,
                                          b.getI64IntegerAttr(along));
    return n.build<graph::SoftmaxOp>(n.f32(), in, b.getI64IntegerAttr(along));
  };
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (n.opset() >= 13 || axis == rank - 1)
    return build(x, axis);
  // [d0 .. d(axis-1), rest]: Reshape's zeros copy the leading dims.
  std::vector<int64_t> flatShape(size_t(axis), 0);
  flatShape.push_back(-1);
  FailureOr<Value> flat = n.build<graph::ReshapeOp>(
      n.f32(), x, tensorI64Constant(n, flatShape), b.getI64IntegerAttr(0));
  if (failed(flat))
    return failure();
  FailureOr<Value> y = build(*flat, axis);
  FailureOr<Value> shape = n.build<graph::ShapeOp>(
      n.i64(), x, b.getI64IntegerAttr(0), b.getI64IntegerAttr(INT64_MAX));
  if (failed(y) || failed(shape))
    return failure();
  return n.build<graph::ReshapeOp>(n.f32(), *y, *shape, b.getI64IntegerAttr(0));
}

} // namespace ingot::compiler::onnximport
