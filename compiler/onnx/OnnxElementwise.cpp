//===- OnnxElementwise.cpp - Elementwise ONNX ops -------------------------===//
//
// Arithmetic, unary math, Where, Cast and Identity. Element types are
// checked against what the kernels implement (docs/kernels.md) so that an
// unsupported combination is reported at the node, not at lowering.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

#include <limits>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Add/Sub/Mul/Div: numpy-broadcast arithmetic on float32/int64/int32.
template <typename OpTy> LogicalResult convertArithmetic(NodeContext &n) {
  Value a, b;
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.requireType(a, "input A", {n.f32(), n.i64(), n.i32()})) ||
      failed(n.requireType(b, "input B (must match A)", {elementTypeOf(a)})))
    return failure();
  return n.setOutput(0, n.build<OpTy>(elementTypeOf(a), a, b));
}

/// Unary math; `intsToo` admits int64/int32 (Neg, Relu), else float32 only.
template <typename OpTy, bool intsToo = false>
LogicalResult convertUnary(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  SmallVector<Type> allowed = {n.f32()};
  if (intsToo)
    allowed.append({n.i64(), n.i32()});
  if (failed(n.requireType(x, "input X", allowed)))
    return failure();
  return n.setOutput(0, n.build<OpTy>(elementTypeOf(x), x));
}

} // namespace

LogicalResult convertAdd(NodeContext &n) {
  return convertArithmetic<graph::AddOp>(n);
}
LogicalResult convertSub(NodeContext &n) {
  return convertArithmetic<graph::SubOp>(n);
}
LogicalResult convertMul(NodeContext &n) {
  return convertArithmetic<graph::MulOp>(n);
}
LogicalResult convertDiv(NodeContext &n) {
  return convertArithmetic<graph::DivOp>(n);
}

/// Pow: float32, int64 or int32 base (narrower integers come widened);
/// the exponent may be float32, int64 or int32. The result has the base's
/// type.
LogicalResult convertPow(NodeContext &n) {
  Value x, y;
  if (failed(n.input(0, x)) || failed(n.input(1, y)) ||
      failed(n.requireType(x, "base X", {n.f32(), n.i64(), n.i32()})) ||
      failed(n.requireType(y, "exponent Y", {n.f32(), n.i64(), n.i32()})))
    return failure();
  return n.setOutput(0, n.build<graph::PowOp>(elementTypeOf(x), x, y));
}

LogicalResult convertSqrt(NodeContext &n) {
  return convertUnary<graph::SqrtOp>(n);
}
LogicalResult convertNeg(NodeContext &n) {
  return convertUnary<graph::NegOp, true>(n);
}
LogicalResult convertExp(NodeContext &n) {
  return convertUnary<graph::ExpOp>(n);
}
LogicalResult convertErf(NodeContext &n) {
  return convertUnary<graph::ErfOp>(n);
}
LogicalResult convertTanh(NodeContext &n) {
  return convertUnary<graph::TanhOp>(n);
}
LogicalResult convertSigmoid(NodeContext &n) {
  return convertUnary<graph::SigmoidOp>(n);
}
LogicalResult convertRelu(NodeContext &n) {
  return convertUnary<graph::ReluOp, true>(n);
}

/// Where: bool condition selecting between two same-typed tensors.
LogicalResult convertWhere(NodeContext &n) {
  Value c, x, y;
  if (failed(n.input(0, c)) || failed(n.input(1, x)) || failed(n.input(2, y)) ||
      failed(n.requireType(c, "condition", {n.i1()})) ||
      failed(n.requireType(y, "input Y", {elementTypeOf(x)})))
    return failure();
  return n.setOutput(0, n.build<graph::WhereOp>(elementTypeOf(x), c, x, y));
}

/// IsNaN: x == x is false exactly for NaN; `not` turns that round.
LogicalResult convertIsNaN(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input X", {n.f32()})))
    return failure();
  OpBuilder &b = n.builder();
  FailureOr<Value> same =
      n.build<graph::CompareOp>(n.i1(), x, x, b.getStringAttr("equal"));
  if (failed(same))
    return failure();
  return n.setOutput(0, n.build<graph::UnaryMathOp>(n.i1(), *same,
                                                    b.getStringAttr("not"),
                                                    FloatAttr(), FloatAttr()));
}

/// IsInf: equality with +inf (of |x| when both signs are detected) or
/// -inf; with neither, equality with NaN, which is always false.
LogicalResult convertIsInf(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input X", {n.f32()})))
    return failure();
  const bool neg = n.attrInt("detect_negative", 1) != 0;
  const bool pos = n.attrInt("detect_positive", 1) != 0;
  if (n.ctx.hasError())
    return failure();
  OpBuilder &b = n.builder();
  const double inf = std::numeric_limits<double>::infinity();
  Value probe = x;
  if (neg && pos) {
    FailureOr<Value> a = n.build<graph::UnaryMathOp>(
        n.f32(), x, b.getStringAttr("abs"), FloatAttr(), FloatAttr());
    if (failed(a))
      return failure();
    probe = *a;
  }
  const double target = neg && pos ? inf
                        : pos      ? inf
                        : neg      ? -inf
                                   : std::numeric_limits<double>::quiet_NaN();
  return n.setOutput(0, n.build<graph::CompareOp>(
                            n.i1(), probe, scalarConstant(n, n.f32(), target),
                            b.getStringAttr("equal")));
}

/// x cast to `target`; Cast and CastLike share it. saturate (19+, 0 or 1)
/// only concerns float8 targets: 0 there is kept on the op (overflow to
/// infinity / NaN), elsewhere it is refused. round_mode (24+) only
/// concerns float8e8m0, which ingot has not.
static LogicalResult castTo(NodeContext &n, Value x, Type target) {
  const int64_t saturate = n.attrInt("saturate", 1);
  if (saturate != 0 && saturate != 1)
    return n.fail("saturate " + std::to_string(saturate) + " is not 0 or 1",
                  "saturate 0 or 1");
  if (n.ctx.hasError())
    return failure();
  const bool float8 = isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
                          Float8E5M2FNUZType>(target);
  // Like onnxruntime: saturate 0 on a cast to anything else is refused.
  if (saturate == 0 && !float8)
    return n.fail("saturate 0 applies only to casts to float8 types",
                  "saturate 1 (the default), or a float8 target");
  if (target == elementTypeOf(x))
    return n.setOutput(0, x);
  FailureOr<Value> cast = n.build<graph::CastOp>(target, x);
  if (succeeded(cast) && float8 && saturate == 0)
    (*cast).getDefiningOp()->setAttr(
        "saturate", IntegerAttr::get(IntegerType::get(n.ctx.mlir(), 64), 0));
  return n.setOutput(0, cast);
}

LogicalResult convertCast(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  const onnx::AttributeProto *to = n.attr("to", onnx::AttributeProto::INT);
  if (!to)
    return n.ctx.hasError() ? failure() : n.fail("missing attribute 'to'");
  Type target = elementTypeOf(n.ctx.mlir(), int32_t(to->i()));
  if (!target)
    return n.fail("Cast target dtype " + dtypeName(int32_t(to->i())) +
                      " is not supported",
                  kSupportedDtypes);
  return castTo(n, x, target);
}

/// CastLike (15+): a Cast to the dtype of input 1, whose values are unused.
LogicalResult convertCastLike(NodeContext &n) {
  Value x, like;
  if (failed(n.input(0, x)) || failed(n.input(1, like)))
    return failure();
  return castTo(n, x, elementTypeOf(like));
}

/// Swish (24): x * sigmoid(alpha * x), alpha 1 by default (SiLU).
LogicalResult convertSwish(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input X", {n.f32()})))
    return failure();
  const double alpha = n.attrFloat("alpha", 1.0f);
  if (n.ctx.hasError())
    return failure();
  Value scaled = x;
  if (alpha != 1.0) {
    FailureOr<Value> ax =
        n.build<graph::MulOp>(n.f32(), x, scalarConstant(n, n.f32(), alpha));
    if (failed(ax))
      return failure();
    scaled = *ax;
  }
  FailureOr<Value> gate = n.build<graph::SigmoidOp>(n.f32(), scaled);
  if (failed(gate))
    return failure();
  return n.setOutput(0, n.build<graph::MulOp>(n.f32(), x, *gate));
}

/// Identity: the output is the input value; no op is created.
LogicalResult convertIdentity(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  return n.setOutput(0, x);
}

} // namespace ingot::compiler::onnximport
