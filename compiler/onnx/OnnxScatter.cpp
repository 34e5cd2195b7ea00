//===- OnnxScatter.cpp - GatherElements, ScatterND, ScatterElements -------===//
//
// The element-addressed gather and the two scatters (ScatterElements also
// under its opset 9-10 name, Scatter).
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// ScatterND's and ScatterElements' reduction attribute, checked.
FailureOr<std::string> scatterReduction(NodeContext &n) {
  std::string reduction = "none";
  if (const auto *a = n.attr("reduction", onnx::AttributeProto::STRING))
    reduction = a->s();
  if (n.ctx.hasError())
    return failure();
  bool minMax = n.opset() >= 18 && (reduction == "max" || reduction == "min");
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      !minMax)
    return n.fail("reduction '" + reduction + "'",
                  "none, add, mul; max, min from opset 18");
  return reduction;
}

} // namespace

LogicalResult convertGatherElements(NodeContext &n) {
  Value data, indices;
  if (failed(n.input(0, data)) || failed(n.input(1, indices)) ||
      failed(n.requireType(indices, "indices", {n.i64(), n.i32()})))
    return failure();
  int64_t axis;
  if (failed(n.normalizeAxis(n.attrInt("axis", 0), rankOf(data), "axis", axis)))
    return failure();
  return n.setOutput(
      0, n.build<graph::GatherElementsOp>(elementTypeOf(data), data, indices,
                                          n.builder().getI64IntegerAttr(axis)));
}

LogicalResult convertScatterND(NodeContext &n) {
  Value data, indices, updates;
  if (failed(n.input(0, data)) || failed(n.input(1, indices)) ||
      failed(n.input(2, updates)) ||
      failed(n.requireType(indices, "indices", {n.i64()})) ||
      failed(n.requireType(updates, "updates", {elementTypeOf(data)})))
    return failure();
  FailureOr<std::string> reduction = scatterReduction(n);
  if (failed(reduction))
    return failure();
  return n.setOutput(0, n.build<graph::ScatterNDOp>(
                            elementTypeOf(data), data, indices, updates,
                            n.builder().getStringAttr(*reduction)));
}

/// ScatterElements (11; Scatter, its name in opsets 9-10, has no
/// reduction).
LogicalResult convertScatterElements(NodeContext &n) {
  Value data, indices, updates;
  if (failed(n.input(0, data)) || failed(n.input(1, indices)) ||
      failed(n.input(2, updates)) ||
      failed(n.requireType(indices, "indices", {n.i64(), n.i32()})) ||
      failed(n.requireType(updates, "updates", {elementTypeOf(data)})))
    return failure();
  FailureOr<std::string> reduction = scatterReduction(n);
  int64_t axis;
  if (failed(reduction) ||
      failed(n.normalizeAxis(n.attrInt("axis", 0), rankOf(data), "axis", axis)))
    return failure();
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::ScatterElementsOp>(elementTypeOf(data), data, indices,
                                           updates, b.getI64IntegerAttr(axis),
                                           b.getStringAttr(*reduction)));
}

} // namespace ingot::compiler::onnximport
