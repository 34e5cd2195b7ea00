//===- IngotMathOps.cpp - Verifiers of the math coverage ops --------------===//
//
// Each verifier checks `kind` and the element types the kernels implement
// (docs/kernels-math.md), then that the result type agrees with the shape
// rule (ShapeInferenceMath.cpp) wherever dims are static.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/VerifierUtil.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

bool isNumeric(Type t) {
  return t.isF32() || t.isInteger(64) || t.isInteger(32);
}

LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  int64_t normalized;
  if (!shape::normalizeAxis(axis, rank, &normalized))
    return op->emitOpError("axis ")
           << axis << " out of range for rank " << rank;
  return success();
}

} // namespace

LogicalResult UnaryMathOp::verify() {
  StringRef kind = getKind();
  Type t = elementType(getInput());
  enum Domain { Float, Signed, Bool, Param1, Param2, Unknown };
  Domain d =
      llvm::StringSwitch<Domain>(kind)
          .Cases({"reciprocal", "log", "softplus", "mish", "sin", "cos"}, Float)
          .Cases({"floor", "ceil", "round"}, Float)
          .Cases({"abs", "sign"}, Signed)
          .Case("not", Bool)
          .Cases({"leaky_relu", "elu"}, Param1)
          .Case("hard_sigmoid", Param2)
          .Default(Unknown);
  if (d == Unknown)
    return emitOpError("unknown kind \"") << kind << "\"";
  bool ok = d == Bool ? t.isInteger(1) : d == Signed ? isNumeric(t) : t.isF32();
  if (!ok)
    return emitOpError("kind \"") << kind << "\" does not take " << t;
  if ((d == Param1 || d == Param2) && !getAlpha())
    return emitOpError("kind \"") << kind << "\" needs `alpha`";
  if (d == Param2 && !getBeta())
    return emitOpError("kind \"") << kind << "\" needs `beta`";
  return success();
}

LogicalResult BinaryMathOp::verify() {
  StringRef kind = getKind();
  Type t = elementType(getLhs());
  if (t != elementType(getRhs()) || t != elementType(getResult()))
    return emitOpError("operands and result must share an element type");
  if (kind == "max" || kind == "min") {
    if (!isNumeric(t))
      return emitOpError("kind \"") << kind << "\" does not take " << t;
  } else if (kind == "and" || kind == "or") {
    if (!t.isInteger(1))
      return emitOpError("kind \"") << kind << "\" takes i1, got " << t;
  } else if (llvm::is_contained({"mod", "fmod", "shift_left", "shift_right",
                                 "bitwise_and", "bitwise_or", "bitwise_xor"},
                                kind)) {
    const bool floatMod = (kind == "fmod" || kind == "mod") && t.isF32();
    if (!t.isSignlessInteger(64) && !t.isSignlessInteger(32) && !floatMod)
      return emitOpError("kind \"")
             << kind << "\" takes i64 or i32"
             << (kind == "fmod" || kind == "mod" ? " or f32" : "") << ", got "
             << t;
  } else {
    return emitOpError("unknown kind \"") << kind << "\"";
  }
  return verifyShapeRule(*this);
}

LogicalResult CompareOp::verify() {
  StringRef kind = getKind();
  Type t = elementType(getLhs());
  if (t != elementType(getRhs()))
    return emitOpError("operands must share an element type");
  if (!llvm::is_contained(
          {"equal", "less", "less_equal", "greater", "greater_equal"}, kind))
    return emitOpError("unknown kind \"") << kind << "\"";
  if (!isNumeric(t) && !(kind == "equal" && t.isInteger(1)))
    return emitOpError("kind \"") << kind << "\" does not take " << t;
  return verifyShapeRule(*this);
}

LogicalResult ReduceOp::verify() {
  StringRef kind = getKind();
  Type t = elementType(getInput());
  if (t != elementType(getResult()))
    return emitOpError("input and result must share an element type");
  bool anyNumeric = llvm::is_contained({"sum", "max", "min", "prod"}, kind);
  bool floatOnly =
      llvm::is_contained({"l2", "sum_square", "log_sum_exp", "mean"}, kind);
  if (!anyNumeric && !floatOnly)
    return emitOpError("unknown kind \"") << kind << "\"";
  // Bool max/min are any/all (ONNX 20+).
  bool boolOk = t.isInteger(1) && (kind == "max" || kind == "min");
  if (floatOnly ? !t.isF32() : !isNumeric(t) && !boolOk)
    return emitOpError("kind \"") << kind << "\" does not take " << t;
  if (getAxesInput() &&
      (!getAxes().empty() || getAxesInput().getType().getRank() != 1))
    return emitOpError("a run-time axes operand must be 1-D and comes "
                       "with an empty `axes` attribute");
  return verifyShapeRule(*this);
}

LogicalResult ArgReduceOp::verify() {
  if (getKind() != "max" && getKind() != "min")
    return emitOpError("kind must be \"max\" or \"min\", got \"")
           << getKind() << "\"";
  if (!isNumeric(elementType(getInput())))
    return emitOpError("does not take ") << elementType(getInput());
  if (failed(verifyAxis(*this, getAxis(), getInput().getType().getRank())))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult LogSoftmaxOp::verify() {
  if (!elementType(getInput()).isF32())
    return emitOpError("expects f32, got ") << elementType(getInput());
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult CumSumOp::verify() {
  if (!isNumeric(elementType(getInput())))
    return emitOpError("does not take ") << elementType(getInput());
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the input type");
  if (bool(getAxis()) == bool(getAxisInput()))
    return emitOpError("needs exactly one of `axis` and an axis operand");
  if (getAxisInput()) {
    if (getAxisInput().getType().getNumElements() != 1)
      return emitOpError("axis operand must hold one value");
    return success();
  }
  return verifyAxis(*this, *getAxis(), getType().getRank());
}
