//===- OnnxDetection.cpp - NonMaxSuppression ------------------------------===//
//
// NonMaxSuppression becomes `ingot.non_max_suppression`. Its three scalar
// inputs are folded into attributes when known at compile time, as
// exporters (torchvision, the TensorFlow and YOLO converters) mostly write
// them: a known max_output_boxes_per_class then bounds the result tightly.
// A scalar computed at run time (or a graph input) stays an operand that
// the kernel reads, and the result is bounded by B * C * N.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Input `i`: absent (`dflt`), known at compile time (`out`), or a run-time
/// value of `type` (`operand`).
LogicalResult scalarInput(NodeContext &n, int i, const char *role, Type type,
                          std::optional<double> dflt,
                          std::optional<double> &out, Value &operand) {
  out = dflt;
  if (!n.hasInput(i))
    return success();
  Value v;
  if (failed(n.input(i, v)))
    return failure();
  if (std::optional<double> known = constantScalar(n, v)) {
    out = known;
    return success();
  }
  if (failed(n.requireType(v, role, {type})))
    return failure();
  auto shaped = cast<RankedTensorType>(v.getType());
  if (shaped.hasStaticShape() && shaped.getNumElements() != 1)
    return n.fail(std::string(role) + " of " +
                      std::to_string(shaped.getNumElements()) + " elements",
                  "one element");
  operand = v;
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
  Value maxIn, iouIn, scoreIn;
  if (failed(scalarInput(n, 2, "max_output_boxes_per_class", n.i64(), 0.0,
                         maxOut, maxIn)) ||
      failed(scalarInput(n, 3, "iou_threshold", n.f32(), 0.0, iou, iouIn)) ||
      failed(scalarInput(n, 4, "score_threshold", n.f32(), std::nullopt,
                         scoreThreshold, scoreIn)))
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
             n.i64(), boxes, scores, maxIn, iouIn, scoreIn,
             b.getI64IntegerAttr(centered), b.getI64IntegerAttr(perClass),
             b.getF32FloatAttr(float(*iou)),
             scoreThreshold ? b.getF32FloatAttr(float(*scoreThreshold))
                            : FloatAttr()));
}

} // namespace ingot::compiler::onnximport
