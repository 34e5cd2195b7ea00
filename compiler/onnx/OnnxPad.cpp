//===- OnnxPad.cpp - Pad
//---------------------------------------------------===//
//
// Pad: pads (and the pad value) stay run-time operands; opset 18's axes,
// constant or fed at run time, spread the given pads over every dim.
// Modes constant, edge, reflect, and wrap from opset 19.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Axes only known at run time: full = ScatterElements(zeros[2·rank],
/// concat(axes', axes' + rank), pads) with axes' the normalised axes, so a
/// bad axis or a pads length other than 2·len(axes) fails the run.
LogicalResult padsOverRunTimeAxes(NodeContext &n, int64_t rank, Value axes,
                                  Value &pads) {
  if (failed(n.requireType(axes, "axes", {n.i64(), n.i32()})))
    return failure();
  OpBuilder &b = n.builder();
  if (elementTypeOf(axes).isInteger(32)) {
    FailureOr<Value> wide = n.build<graph::CastOp>(n.i64(), axes);
    if (failed(wide))
      return failure();
    axes = *wide;
  }
  FailureOr<Value> norm = normalizeRunTimeAxes(n, axes, rank);
  FailureOr<Value> ends =
      failed(norm)
          ? norm
          : n.build<graph::AddOp>(n.i64(), *norm,
                                  scalarConstant(n, n.i64(), double(rank)));
  if (failed(ends))
    return failure();
  FailureOr<Value> index = n.build<graph::ConcatOp>(
      n.i64(), ValueRange{*norm, *ends}, b.getI64IntegerAttr(0));
  if (failed(index))
    return failure();
  FailureOr<Value> full = n.build<graph::ScatterElementsOp>(
      n.i64(), tensorI64Constant(n, std::vector<int64_t>(size_t(2 * rank), 0)),
      *index, pads, b.getI64IntegerAttr(0), b.getStringAttr("none"));
  if (failed(full))
    return failure();
  pads = *full;
  return success();
}

/// Pad's `pads` given for `axes` only (18+) spread over every dim: by
/// value when known, else by a Gather from the given pads with a zero
/// appended, so run-time pads stay run-time; run-time axes scatter them.
LogicalResult padsOverAllDims(NodeContext &n, int64_t rank, Value &pads) {
  std::vector<int64_t> axes, normalized;
  if (Value given; succeeded(n.input(3, given)) && !n.ctx.constantInts(given))
    return padsOverRunTimeAxes(n, rank, given, pads);
  if (failed(n.constantInts(3, "axes", axes)))
    return failure();
  for (int64_t axis : axes) {
    int64_t a;
    if (failed(n.normalizeAxis(axis, rank, "axes entry", a)))
      return failure();
    normalized.push_back(a);
  }
  const int64_t k = int64_t(axes.size());
  auto padsType = cast<RankedTensorType>(pads.getType());
  if (padsType.getRank() != 1 ||
      (padsType.hasStaticShape() && padsType.getDimSize(0) != 2 * k))
    return n.fail("pads must have 2 entries per axis");
  // full[d] (begin) and full[d + rank] (end) pick given[i] / given[i + k]
  // for d = axes[i], else the appended zero at index 2k.
  std::vector<int64_t> pick(2 * rank, 2 * k);
  for (int64_t i = 0; i < k; ++i) {
    pick[normalized[i]] = i;
    pick[normalized[i] + rank] = i + k;
  }
  if (std::optional<std::vector<int64_t>> given = n.ctx.constantInts(pads)) {
    given->push_back(0);
    std::vector<int64_t> full;
    for (int64_t p : pick)
      full.push_back((*given)[p]);
    pads = tensorI64Constant(n, full);
    return success();
  }
  OpBuilder &b = n.builder();
  FailureOr<Value> withZero = n.build<graph::ConcatOp>(
      n.i64(), ValueRange{pads, tensorI64Constant(n, {0})},
      b.getI64IntegerAttr(0));
  if (failed(withZero))
    return failure();
  FailureOr<Value> full = n.build<graph::GatherOp>(
      n.i64(), *withZero, tensorI64Constant(n, pick), b.getI64IntegerAttr(0));
  if (failed(full))
    return failure();
  pads = *full;
  return success();
}
} // namespace

/// Pad (13+; axes from 18): pads over all dims; a zero of the input's type
/// stands in for an absent constant_value.
LogicalResult convertPad(NodeContext &n) {
  Value x, pads, value;
  if (n.opset() < 11) { // pads and value are attributes
    std::vector<int64_t> given;
    bool present;
    if (failed(n.input(0, x)) ||
        failed(intsOperand(n, 1, "pads", 11, true, given, present)))
      return failure();
    pads = tensorI64Constant(n, given);
    float constant = n.attrFloat("value", 0.0f);
    if (n.ctx.hasError() || failed(n.requireType(x, "data", {n.f32()})))
      return failure();
    value = scalarConstant(n, n.f32(), constant);
  } else if (failed(n.input(0, x)) || failed(n.input(1, pads)) ||
             failed(n.requireType(pads, "pads", {n.i64()})) ||
             failed(n.optionalInput(2, value))) {
    return failure();
  }
  std::string mode = "constant";
  if (const auto *a = n.attr("mode", onnx::AttributeProto::STRING))
    mode = a->s();
  if (n.ctx.hasError())
    return failure();
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      (mode != "wrap" || n.opset() < 19))
    return n.fail("mode '" + mode + "'",
                  "constant, edge, reflect, and wrap from opset 19");
  if (n.opset() >= 18 && n.hasInput(3) &&
      failed(padsOverAllDims(n, rankOf(x), pads)))
    return failure();
  Type elem = elementTypeOf(x);
  if (value) {
    if (failed(n.requireType(value, "constant_value", {elem})))
      return failure();
  } else {
    value = scalarConstant(n, elem, 0.0);
  }
  return n.setOutput(0, n.build<graph::PadOp>(elem, x, pads, value,
                                              n.builder().getStringAttr(mode)));
}

} // namespace ingot::compiler::onnximport
