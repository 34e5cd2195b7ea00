//===- OnnxDetection.cpp - NonMaxSuppression ------------------------------===//
//
// NonMaxSuppression becomes `ingot.non_max_suppression` with its three
// scalar inputs folded into attributes: exporters (torchvision, the
// TensorFlow and YOLO converters) write them as initializers or Constant
// nodes, and knowing max_output_boxes_per_class bounds the result at
// compile time. A scalar computed at run time is refused by name.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Input `i` when present: its value if known at compile time, else an
/// error naming it; `dflt` when absent.
LogicalResult scalarInput(NodeContext &n, int i, const char *role,
                          std::optional<double> dflt,
                          std::optional<double> &out) {
  if (!n.hasInput(i)) {
    out = dflt;
    return success();
  }
  Value v;
  if (failed(n.input(i, v)))
    return failure();
  out = constantScalar(n, v);
  if (!out)
    return n.fail(std::string(role) + " computed at run time",
                  std::string(role) + " a compile-time scalar (an "
                                      "initializer or Constant)");
  return success();
}

} // namespace

LogicalResult convertNonMaxSuppression(NodeContext &n) {
  Value boxes, scores;
  if (failed(n.input(0, boxes)) || failed(n.input(1, scores)) ||
      failed(n.requireType(boxes, "boxes", {n.f32()})) ||
      failed(n.requireType(scores, "scores", {n.f32()})))
    return failure();
  std::optional<double> maxOut, iou, scoreThreshold;
  if (failed(scalarInput(n, 2, "max_output_boxes_per_class", 0.0, maxOut)) ||
      failed(scalarInput(n, 3, "iou_threshold", 0.0, iou)) ||
      failed(
          scalarInput(n, 4, "score_threshold", std::nullopt, scoreThreshold)))
    return failure();
  const int64_t centered = n.attrInt("center_point_box", 0);
  if (n.ctx.hasError())
    return failure();
  if (centered != 0 && centered != 1)
    return n.fail("center_point_box " + std::to_string(centered), "0 or 1");
  if (!(*iou >= 0 && *iou <= 1))
    return n.fail("iou_threshold " + std::to_string(*iou), "a value in [0, 1]");
  // A negative maximum selects nothing, as onnxruntime reads it.
  const int64_t perClass =
      !(*maxOut >= 1) ? 0 : int64_t(std::min(*maxOut, 9.2e18));
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::NonMaxSuppressionOp>(
             n.i64(), boxes, scores, b.getI64IntegerAttr(centered),
             b.getI64IntegerAttr(perClass), b.getF32FloatAttr(float(*iou)),
             scoreThreshold ? b.getF32FloatAttr(float(*scoreThreshold))
                            : FloatAttr()));
}

} // namespace ingot::compiler::onnximport
