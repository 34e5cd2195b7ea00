//===- IngotTensorOps.cpp - Verifiers and folders of the coverage ops
//------===//
//
// Verifiers of the tensor family: element types, then agreement of the
// result type with the shape rule (ShapeInferenceTensor.cpp) wherever dims
// are static.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/VerifierUtil.h"

#include <tuple>

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

LogicalResult requireF32(Operation *op, Value v) {
  if (!elementType(v).isF32())
    return op->emitOpError("expects an f32 tensor, got ") << v.getType();
  return success();
}

LogicalResult checkStr(Operation *op, StringRef what, StringRef value,
                       ArrayRef<StringRef> allowed) {
  if (llvm::is_contained(allowed, value))
    return success();
  return op->emitOpError() << what << " '" << value << "' is not supported";
}

const StringRef kAutoPads[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
/// Activations the conv kernel applies after its bias.
const StringRef kConvActivations[] = {"relu",      "silu",       "gelu",
                                      "gelu_tanh", "hard_swish", "leaky_relu"};

/// leaky_relu has its slope and nothing else has one; clip bounds are
/// numbers (max then min, as Clip is imported: hi < lo gives hi).
LogicalResult verifyConvActivation(ConvOp op) {
  const bool leaky = op.getActivation() == "leaky_relu";
  if (leaky != bool(op.getActivationAlpha()))
    return op.emitOpError("activation_alpha goes with leaky_relu alone");
  const auto lo = op.getClipMin(), hi = op.getClipMax();
  for (std::optional<APFloat> bound : {lo, hi})
    if (bound && bound->isNaN())
      return op.emitOpError("clip bounds must be numbers");
  return success();
}

} // namespace

LogicalResult FlattenOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult SliceOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ExpandOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  // Static dims must broadcast (the shape rule is lenient for bounds).
  ValueInfo target = valueInfoFromIR(getShape());
  if (target.values) {
    shape::Shape t;
    for (int64_t v : *target.values)
      t.push_back(v == kUnknownValue ? shape::kDynamic : v);
    shape::Shape out;
    std::string error;
    if (!shape::broadcast({shapeOf(getInput().getType()), t}, &out, &error))
      return emitOpError(error);
  }
  return verifyShapeRule(*this);
}

LogicalResult TileOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult RangeOp::verify() {
  if (failed(
          verifySameElementType(*this, {getStart(), getLimit(), getDelta()})))
    return failure();
  Type t = elementType(getResult());
  if (!t.isF32() && !t.isInteger(64) && !t.isInteger(32))
    return emitOpError("expects f32, i64 or i32, got ") << t;
  return verifyShapeRule(*this);
}

LogicalResult PadOp::verify() {
  if (failed(verifySameElementType(*this, {getInput(), getValue()})) ||
      failed(checkStr(*this, "mode", getMode(),
                      {"constant", "edge", "reflect", "wrap"})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult GatherElementsOp::verify() {
  if (failed(verifySameElementType(*this, {getData()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult GatherNDOp::verify() {
  if (failed(verifySameElementType(*this, {getData()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ScatterNDOp::verify() {
  if (failed(verifySameElementType(*this, {getData(), getUpdates()})) ||
      failed(checkStr(*this, "reduction", getReduction(),
                      {"none", "add", "mul", "max", "min"})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ScatterElementsOp::verify() {
  if (failed(verifySameElementType(*this, {getData(), getUpdates()})) ||
      failed(checkStr(*this, "reduction", getReduction(),
                      {"none", "add", "mul", "max", "min"})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult TopKOp::verify() {
  if (getSelect() == 0) {
    if (failed(verifySameElementType(*this, {getInput()})))
      return failure();
  } else if (getSelect() != 1 || !elementType(getResult()).isInteger(64)) {
    return emitOpError("select must be 0 (values) or 1 (i64 indices)");
  }
  return verifyShapeRule(*this);
}

/// Input channels equal the weight's per-group channels times group.
static LogicalResult verifyConvChannels(Operation *op, Value input,
                                        Value weight, int64_t group) {
  shape::Shape x = shapeOf(input.getType()), w = shapeOf(weight.getType());
  if (x.size() > 1 && w.size() > 1 && x[1] != shape::kDynamic &&
      w[1] != shape::kDynamic && x[1] != w[1] * group)
    return op->emitOpError("channels do not match: input ")
           << shape::toString(x) << ", weight " << shape::toString(w)
           << ", group " << group;
  return success();
}

LogicalResult ConvOp::verify() {
  SmallVector<Value> all = {getInput(), getWeight()};
  if (getBias())
    all.push_back(getBias());
  if (failed(verifySameElementType(*this, all)) ||
      failed(requireF32(*this, getInput())) ||
      failed(checkStr(*this, "auto_pad", getAutoPad(), kAutoPads)) ||
      (getActivation() && failed(checkStr(*this, "activation", *getActivation(),
                                          kConvActivations))) ||
      failed(verifyConvActivation(*this)) ||
      failed(verifyConvChannels(*this, getInput(), getWeight(), getGroup())))
    return failure();
  if (getResidual() && getResidual().getType() != getResult().getType())
    return emitOpError("residual must have the result's type ")
           << getResult().getType() << ", got " << getResidual().getType();
  return verifyShapeRule(*this);
}

LogicalResult ConvIntegerOp::verify() {
  auto isQ8 = [](Type t) {
    return t.isUnsignedInteger(8) || t.isSignlessInteger(8);
  };
  Type x = elementType(getInput()), w = elementType(getWeight());
  if (!isQ8(x) || !isQ8(w))
    return emitOpError("input and weight must be ui8 or i8, got ")
           << x << " and " << w;
  if (!elementType(getResult()).isSignlessInteger(32))
    return emitOpError("result must be i32");
  if (failed(checkStr(*this, "auto_pad", getAutoPad(), kAutoPads)) ||
      failed(verifyConvChannels(*this, getInput(), getWeight(), getGroup())))
    return failure();
  shape::Shape ws = shapeOf(getWeight().getType());
  const int64_t channels = ws.empty() ? shape::kDynamic : ws[0];
  if (failed(verifyZeroPoint(*this, getInputZeroPoint(), x, shape::kDynamic,
                             "")) ||
      failed(verifyZeroPoint(*this, getWeightZeroPoint(), w, channels,
                             "output channel")))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ConvTransposeOp::verify() {
  SmallVector<Value> all = {getInput(), getWeight()};
  if (getBias())
    all.push_back(getBias());
  if (failed(verifySameElementType(*this, all)) ||
      failed(requireF32(*this, getInput())))
    return failure();
  shape::Shape x = shapeOf(getInput().getType()),
               w = shapeOf(getWeight().getType());
  if (x.size() > 1 && !w.empty() && x[1] != shape::kDynamic &&
      w[0] != shape::kDynamic && x[1] != w[0])
    return emitOpError("channels do not match: input ")
           << shape::toString(x) << ", weight " << shape::toString(w);
  return verifyShapeRule(*this);
}

/// Shared by lstm and gru: every operand f32 like the result, a known
/// direction, and `select` below the number of outputs the op can pick.
static LogicalResult verifyRecurrent(Operation *op, StringRef direction,
                                     int64_t select, int64_t outputs,
                                     const char *outputNames) {
  if (failed(verifySameElementType(op, op->getOperands())) ||
      failed(requireF32(op, op->getOperand(0))) ||
      failed(checkStr(op, "direction", direction,
                      {"forward", "reverse", "bidirectional"})))
    return failure();
  if (select < 0 || select >= outputs)
    return op->emitOpError("select must be ") << outputNames;
  return success();
}

LogicalResult LstmOp::verify() {
  if (failed(verifyRecurrent(*this, getDirection(), getSelect(), 4,
                             "0 (Y), 1 (Y_h), 2 (Y_c) or 3 (all three)")))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult GruOp::verify() {
  if (failed(verifyRecurrent(*this, getDirection(), getSelect(), 3,
                             "0 (Y), 1 (Y_h) or 2 (both)")))
    return failure();
  if (getLinearBeforeReset() > 1) // unsigned: 0 or 1
    return emitOpError("linear_before_reset must be 0 or 1");
  return verifyShapeRule(*this);
}

#define POOL_VERIFIER(OP, CAN_SELECT)                                          \
  LogicalResult OP::verify() {                                                 \
    if (failed(requireF32(*this, getInput())) ||                               \
        failed(checkStr(*this, "auto_pad", getAutoPad(), kAutoPads)))          \
      return failure();                                                        \
    if (getSelect() != 0 && (!CAN_SELECT || getSelect() > 2 ||                 \
                             !elementType(getResult()).isInteger(64)))         \
      return emitOpError("select must be 0, or 1/2 with an i64 result on "     \
                         "max_pool");                                          \
    if (getSelect() == 0 &&                                                    \
        failed(verifySameElementType(*this, {getInput()})))                    \
      return failure();                                                        \
    return verifyShapeRule(*this);                                             \
  }
POOL_VERIFIER(MaxPoolOp, true)
POOL_VERIFIER(AveragePoolOp, false)
#undef POOL_VERIFIER

LogicalResult GlobalAveragePoolOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})) ||
      failed(requireF32(*this, getInput())))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ResizeOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})) ||
      failed(requireF32(*this, getInput())) ||
      failed(
          checkStr(*this, "mode", getMode(), {"nearest", "linear", "cubic"})) ||
      failed(checkStr(*this, "coordinate_transformation_mode",
                      getCoordinateTransformationMode(),
                      {"half_pixel", "pytorch_half_pixel", "align_corners",
                       "asymmetric", "half_pixel_symmetric",
                       "tf_crop_and_resize"})) ||
      failed(checkStr(
          *this, "nearest_mode", getNearestMode(),
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})))
    return failure();
  if (Value target = getScalesInput() ? getScalesInput() : getSizesInput()) {
    if (getScalesInput() && getSizesInput())
      return emitOpError("takes run-time scales or sizes, not both");
    if (getScalesInput() && !elementType(getScalesInput()).isF32())
      return emitOpError("run-time scales must be f32");
    if (!getScales().empty() || !getSizes().empty())
      return emitOpError("has run-time scales or sizes and attribute ones");
    auto t = cast<RankedTensorType>(target.getType());
    if (!getAxes() || t.getRank() != 1 ||
        (t.hasStaticShape() && t.getDimSize(0) != int64_t(getAxes()->size())))
      return emitOpError("run-time scales or sizes need one entry per axis "
                         "of 'axes'");
    int64_t rank = cast<RankedTensorType>(getInput().getType()).getRank();
    ArrayRef<int64_t> axes = *getAxes(); // a copy: getAxes() is a temporary
    for (int64_t a : axes)
      if (a < 0 || a >= rank)
        return emitOpError("axis ") << a << " is outside rank " << rank;
  }
  const bool crop = getCoordinateTransformationMode() == "tf_crop_and_resize";
  if (crop != bool(getRoiInput()))
    return emitOpError("takes a roi exactly with tf_crop_and_resize");
  if (Value roi = getRoiInput()) {
    auto t = cast<RankedTensorType>(roi.getType());
    int64_t rank = cast<RankedTensorType>(getInput().getType()).getRank();
    if (!t.getElementType().isF32() || t.getRank() != 1 ||
        (t.hasStaticShape() && t.getDimSize(0) != 2 * rank))
      return emitOpError("roi must be f32 with 2 entries per dim");
  }
  if (getKeepAspectRatioPolicy() &&
      failed(checkStr(*this, "keep_aspect_ratio_policy",
                      *getKeepAspectRatioPolicy(),
                      {"stretch", "not_larger", "not_smaller"})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult DepthToSpaceOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})) ||
      failed(checkStr(*this, "mode", getMode(), {"DCR", "CRD"})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult SpaceToDepthOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})) ||
      failed(checkStr(*this, "mode", getMode(), {"DCR", "CRD"})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult OneHotOp::verify() {
  if (failed(verifySameElementType(*this, {getValues()})))
    return failure();
  Type t = elementType(getIndices());
  if (!t.isF32() && !t.isInteger(64) && !t.isInteger(32))
    return emitOpError("indices must be f32, i64 or i32, got ") << t;
  return verifyShapeRule(*this);
}

LogicalResult NonZeroOp::verify() {
  if (!elementType(getResult()).isInteger(64))
    return emitOpError("result must be i64");
  return verifyShapeRule(*this);
}

LogicalResult NonMaxSuppressionOp::verify() {
  if (!elementType(getBoxes()).isF32() || !elementType(getScores()).isF32())
    return emitOpError("boxes and scores must be f32");
  if (!elementType(getResult()).isInteger(64))
    return emitOpError("result must be i64");
  if (getCenterPointBox() != 0 && getCenterPointBox() != 1)
    return emitOpError("center_point_box must be 0 or 1");
  if (getMaxOutputBoxesPerClass() < 0)
    return emitOpError("max_output_boxes_per_class must be >= 0");
  const float iou = getIouThreshold().convertToFloat();
  if (!(iou >= 0.0f && iou <= 1.0f))
    return emitOpError("iou_threshold must be in [0, 1]");
  // Run-time scalars: one element of the type ONNX gives them.
  for (auto [v, name, i64] : {std::tuple{getMaxOutput(), "max_output", true},
                              std::tuple{getIou(), "iou", false},
                              std::tuple{getScore(), "score", false}}) {
    if (!v)
      continue;
    auto type = cast<RankedTensorType>(v.getType());
    const bool typed = i64 ? type.getElementType().isInteger(64)
                           : type.getElementType().isF32();
    if (!typed || (type.hasStaticShape() && type.getNumElements() != 1))
      return emitOpError(std::string(name) + " must be one " +
                         (i64 ? "i64" : "f32") + " element");
  }
  return verifyShapeRule(*this);
}
