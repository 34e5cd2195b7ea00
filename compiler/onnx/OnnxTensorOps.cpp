//===- OnnxTensorOps.cpp - Data movement and convolution converters -------===//
//
// Flatten, Slice, Expand, Tile, Range, DepthToSpace, OneHot and NonZero,
// and the table of the whole tensor family (Pad is in OnnxPad.cpp; Conv,
// pooling, Resize and TopK in OnnxTensorNnOps.cpp, Split in OnnxSplit.cpp,
// GatherElements and the scatters in OnnxScatter.cpp).
// Multi-output ONNX ops become one single-result ingot op per output.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

namespace {

LogicalResult convertFlatten(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  int64_t axis = n.attrInt("axis", 1), rank = rankOf(x);
  if (n.ctx.hasError())
    return failure();
  if (axis < -rank || axis > rank)
    return n.fail("axis " + std::to_string(axis) + " is out of range",
                  "values in [" + std::to_string(-rank) + ", " +
                      std::to_string(rank) + "]");
  if (axis < 0)
    axis += rank;
  return n.setOutput(
      0, n.build<graph::FlattenOp>(elementTypeOf(x), x,
                                   n.builder().getI64IntegerAttr(axis)));
}

/// Slice (10+): absent axes are [0, n), absent steps are 1s; all may be
/// run-time values.
/// A constant starts/ends vector with INT64_MIN entries (exporters write
/// it for "from the very beginning") rewritten to INT64_MIN + 1, which
/// clamps the same way but is not the value tracker's "unknown" marker.
Value avoidUnknownMarker(NodeContext &n, Value v) {
  std::optional<std::vector<int64_t>> ints = n.ctx.constantInts(v);
  if (!ints || !llvm::is_contained(*ints, INT64_MIN) ||
      !elementTypeOf(v).isInteger(64))
    return v;
  for (int64_t &x : *ints)
    x = x == INT64_MIN ? INT64_MIN + 1 : x;
  return tensorI64Constant(n, *ints);
}

/// Starts of run-time length without axes or steps: axes [0, len) and
/// steps of ones, computed from the length when the plan runs.
LogicalResult defaultRunTimeAxesAndSteps(NodeContext &n, Value starts,
                                         Value &axes, Value &steps) {
  OpBuilder &b = n.builder();
  FailureOr<Value> length = n.build<graph::ShapeOp>(
      n.i64(), starts, b.getI64IntegerAttr(0), b.getI64IntegerAttr(1));
  if (failed(length))
    return failure();
  if (!steps) {
    FailureOr<Value> ones = n.build<graph::ConstantOfShapeOp>(
        n.i64(), *length, b.getF64FloatAttr(1.0));
    if (failed(ones))
      return failure();
    steps = *ones;
  }
  if (axes)
    return success();
  FailureOr<Value> scalarLength = n.build<graph::ReshapeOp>(
      n.i64(), *length, tensorI64Constant(n, {}), b.getI64IntegerAttr(0));
  if (failed(scalarLength))
    return failure();
  FailureOr<Value> all = n.build<graph::RangeOp>(
      n.i64(), scalarConstant(n, n.i64(), 0.0), *scalarLength,
      scalarConstant(n, n.i64(), 1.0), b.getI64IntegerAttr(-1));
  if (failed(all))
    return failure();
  axes = *all;
  return success();
}

LogicalResult convertSlice(NodeContext &n) {
  Value x, starts, ends, axes, steps;
  if (n.opset() < 10) // starts, ends and axes are attributes; no steps
    return convertSliceAttributes(n);
  if (failed(n.input(0, x)) || failed(n.input(1, starts)) ||
      failed(n.input(2, ends)) || failed(n.optionalInput(3, axes)) ||
      failed(n.optionalInput(4, steps)))
    return failure();
  for (Value v : {starts, ends, axes, steps})
    if (v &&
        failed(n.requireType(v, "starts/ends/axes/steps", {n.i64(), n.i32()})))
      return failure();
  int64_t count = cast<RankedTensorType>(starts.getType()).getDimSize(0);
  if ((!axes || !steps) && ShapedType::isDynamic(count) &&
      failed(defaultRunTimeAxesAndSteps(n, starts, axes, steps)))
    return failure();
  if (!axes) {
    std::vector<int64_t> all(count);
    for (int64_t i = 0; i < count; ++i)
      all[i] = i;
    axes = tensorI64Constant(n, all);
  }
  if (!steps)
    steps = tensorI64Constant(n, std::vector<int64_t>(count, 1));
  starts = avoidUnknownMarker(n, starts);
  ends = avoidUnknownMarker(n, ends);
  return n.setOutput(0, n.build<graph::SliceOp>(elementTypeOf(x), x, starts,
                                                ends, axes, steps));
}

LogicalResult convertExpand(NodeContext &n) {
  Value x, shape;
  if (failed(n.input(0, x)) || failed(n.input(1, shape)) ||
      failed(n.requireType(shape, "shape", {n.i64()})))
    return failure();
  return n.setOutput(0, n.build<graph::ExpandOp>(elementTypeOf(x), x, shape));
}

LogicalResult convertTile(NodeContext &n) {
  Value x, repeats;
  if (failed(n.input(0, x)) || failed(n.input(1, repeats)) ||
      failed(n.requireType(repeats, "repeats", {n.i64()})))
    return failure();
  return n.setOutput(0, n.build<graph::TileOp>(elementTypeOf(x), x, repeats));
}

} // namespace

std::optional<double> constantScalar(NodeContext &n, Value v) {
  if (auto ints = n.ctx.constantInts(v); ints && ints->size() == 1)
    return double((*ints)[0]);
  DenseFPElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)) && attr.getNumElements() == 1)
    return (*attr.getValues<APFloat>().begin()).convertToDouble();
  return std::nullopt;
}

namespace {

/// Range: constant inputs fix the length at import; run-time ones leave it
/// dynamic (bound computation then asks for --shape).
LogicalResult convertRange(NodeContext &n) {
  // 16-bit floats arrive widened to f32 (OnnxNarrowTypes), which is opset
  // 27's stash_type = 1, its default; accumulating in 16 bits is refused.
  Type declared = n.ctx.elementTypeOfName(n.node.input(0));
  if (declared && (declared.isF16() || declared.isBF16()) &&
      n.attrInt("stash_type", 1) == 0)
    return n.fail("stash_type = 0 on 16-bit floats",
                  "stash_type = 1 (ingot computes the range in float32)");
  Value start, limit, delta;
  if (failed(n.input(0, start)) || failed(n.input(1, limit)) ||
      failed(n.input(2, delta)) ||
      failed(n.requireType(start, "start", {n.f32(), n.i64(), n.i32()})))
    return failure();
  for (Value v : {limit, delta})
    if (failed(n.requireType(v, "limit/delta", {elementTypeOf(start)})))
      return failure();
  int64_t count = -1;
  auto a = constantScalar(n, start), b = constantScalar(n, limit),
       d = constantScalar(n, delta);
  if (a && b && d) {
    if (*d == 0)
      return n.fail("delta is 0");
    // The difference is taken in the input type, as onnxruntime does.
    double diff =
        elementTypeOf(start).isF32() ? double(float(*b) - float(*a)) : *b - *a;
    count = std::max<int64_t>(0, int64_t(std::ceil(diff / *d)));
  }
  return n.setOutput(
      0, n.build<graph::RangeOp>(elementTypeOf(start), start, limit, delta,
                                 n.builder().getI64IntegerAttr(count)));
}

/// DepthToSpace, and SpaceToDepth (`toDepth`; its mode attribute is new
/// in opset 28, DCR before).
LogicalResult convertBlockShuffle(NodeContext &n, bool toDepth) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  const auto *bs = n.attr("blocksize", onnx::AttributeProto::INT);
  std::string mode = "DCR";
  if (const auto *a = n.attr("mode", onnx::AttributeProto::STRING))
    mode = a->s();
  if (n.ctx.hasError())
    return failure();
  if (!bs)
    return n.fail("missing attribute 'blocksize'");
  if (mode != "DCR" && mode != "CRD")
    return n.fail("mode '" + mode + "'", "DCR, CRD");
  OpBuilder &b = n.builder();
  if (toDepth)
    return n.setOutput(0, n.build<graph::SpaceToDepthOp>(
                              elementTypeOf(x), x, b.getI64IntegerAttr(bs->i()),
                              b.getStringAttr(mode)));
  return n.setOutput(0, n.build<graph::DepthToSpaceOp>(
                            elementTypeOf(x), x, b.getI64IntegerAttr(bs->i()),
                            b.getStringAttr(mode)));
}
LogicalResult convertDepthToSpace(NodeContext &n) {
  return convertBlockShuffle(n, false);
}
LogicalResult convertSpaceToDepth(NodeContext &n) {
  return convertBlockShuffle(n, true);
}

/// OneHot: a depth known at compile time sizes the result; one fed at run
/// time is read when the plan runs, which sizes the new dim then.
LogicalResult convertOneHot(NodeContext &n) {
  Value indices, depth, values;
  if (failed(n.input(0, indices)) || failed(n.input(1, depth)) ||
      failed(n.input(2, values)) ||
      failed(n.requireType(indices, "indices", {n.i64(), n.i32(), n.f32()})) ||
      failed(n.requireType(depth, "depth", {n.i64(), n.i32(), n.f32()})))
    return failure();
  auto depthType = cast<RankedTensorType>(depth.getType());
  if (depthType.getRank() > 1 ||
      (depthType.hasStaticShape() && depthType.getNumElements() != 1))
    return n.fail("depth of shape " +
                      shape::toString(graph::shapeOf(depthType)),
                  "one value (a scalar or a 1-element vector)");
  std::optional<double> d = constantScalar(n, depth);
  int64_t rank = rankOf(indices), axis = n.attrInt("axis", -1);
  if (n.ctx.hasError())
    return failure();
  if (axis < -rank - 1 || axis > rank)
    return n.fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0)
    axis += rank + 1;
  OpBuilder &b = n.builder();
  if (d && *d < 1)
    return n.fail("depth " + std::to_string(*d), "depth >= 1");
  return n.setOutput(
      0, n.build<graph::OneHotOp>(
             elementTypeOf(values), indices, values, d ? Value() : depth,
             d ? b.getI64IntegerAttr(int64_t(*d)) : IntegerAttr(),
             b.getI64IntegerAttr(axis)));
}

LogicalResult convertNonZero(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  return n.setOutput(0, n.build<graph::NonZeroOp>(n.i64(), x));
}

const OpConverter kTensorConverters[] = {
    {"Flatten", kMinOpset, kMaxOpset, convertFlatten},
    {"Split", kMinOpset, kMaxOpset, convertSplit},
    {"Slice", kMinOpset, kMaxOpset, convertSlice},
    {"Expand", 8, kMaxOpset, convertExpand},
    {"Tile", kMinOpset, kMaxOpset, convertTile},
    {"Range", 11, kMaxOpset, convertRange},
    {"Pad", kMinOpset, kMaxOpset, convertPad},
    {"GatherElements", 11, kMaxOpset, convertGatherElements},
    {"ScatterND", 11, kMaxOpset, convertScatterND},
    {"ScatterElements", 11, kMaxOpset, convertScatterElements},
    {"Scatter", 9, 10, convertScatterElements},
    {"DepthToSpace", kMinOpset, kMaxOpset, convertDepthToSpace},
    {"SpaceToDepth", kMinOpset, kMaxOpset, convertSpaceToDepth},
    {"OneHot", 9, kMaxOpset, convertOneHot},
    {"NonZero", 9, kMaxOpset, convertNonZero},
    {"NonMaxSuppression", 10, kMaxOpset, convertNonMaxSuppression},
    {"TopK", kMinOpset, kMaxOpset, convertTopK},
    {"Conv", kMinOpset, kMaxOpset, convertConv},
    {"ConvTranspose", kMinOpset, kMaxOpset, convertConvTranspose},
    {"LSTM", kMinOpset, kMaxOpset, convertLstm},
    {"GRU", kMinOpset, kMaxOpset, convertGru},
    {"MaxPool", kMinOpset, kMaxOpset, convertMaxPool},
    {"AveragePool", kMinOpset, kMaxOpset, convertAveragePool},
    {"GlobalAveragePool", kMinOpset, kMaxOpset, convertGlobalAveragePool},
    {"GlobalMaxPool", kMinOpset, kMaxOpset, convertGlobalMaxPool},
    {"Resize", 11, kMaxOpset, convertResize},
    {"Upsample", 7, 9, convertUpsample},
};

} // namespace

llvm::ArrayRef<OpConverter> tensorOpConverters() { return kTensorConverters; }

} // namespace ingot::compiler::onnximport
