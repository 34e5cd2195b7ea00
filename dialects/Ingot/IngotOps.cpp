//===- IngotOps.cpp - Verifiers of the ingot graph dialect ----------------===//
//
// Every verifier checks element types and then that the result type agrees
// with the op's shape rule (ShapeInference.cpp) wherever dims are static.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/VerifierUtil.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <tuple>

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("param name must not be empty");
  if (!getType().hasStaticShape())
    return emitOpError("param tensors must have a static shape");
  if (getParts() && (getParts()->empty() || getConcatAxis() < 0 ||
                     getConcatAxis() >= getType().getRank()))
    return emitOpError("parts must be non-empty and concat_axis a dim of "
                       "the result");
  StringRef layout = getLayout();
  if (layout != "row-major" && layout != "nk16" && layout != "q16")
    return emitOpError("layout must be \"row-major\", \"nk16\" or \"q16\", "
                       "got \"")
           << layout << "\"";
  if (getQuant()) {
    Type elem = getType().getElementType();
    if (getType().getRank() != 2 || layout == "nk16" ||
        !(elem.isF32() || elem.isF16() || elem.isBF16()))
      return emitOpError("a quantised param must be a row-major or q16 2-D "
                         "f32, f16 or bf16 tensor, got ")
             << getType() << " (layout \"" << layout << "\")";
  }
  if (layout == "q16") {
    QuantAttr q = getQuantAttr();
    StringRef format = q ? q.getFormat() : StringRef("none");
    const bool perChannelQ8 =
        q && format == "q8" && q.getGroup() == getType().getDimSize(1);
    if (!q || !(format == "q8" || format == "q4" || format == "q4m") ||
        (q.getGroup() != 32 && !perChannelQ8) || getType().getDimSize(0) % 16 ||
        getType().getDimSize(1) % 32)
      return emitOpError("layout \"q16\" needs a q8, q4 or q4m param in "
                         "groups of 32 (or a q8 one per channel) with rows "
                         "a multiple of 16 and columns of 32, got ")
             << getType() << " quantised " << format;
  }
  return success();
}

LogicalResult ConstantOp::verify() {
  auto type = cast<ShapedType>(getValue().getType());
  if (type != getType())
    return emitOpError("value type ") << type << " differs from " << getType();
  if (type.getNumElements() > kMaxInlineConstantElements)
    return emitOpError("inline constants hold at most ")
           << kMaxInlineConstantElements
           << " elements; larger tensors must be ingot.param";
  return success();
}

#define INGOT_BINARY_VERIFIER(OP)                                              \
  LogicalResult OP::verify() {                                                 \
    if (failed(verifySameElementType(*this, {getLhs(), getRhs()})))            \
      return failure();                                                        \
    return verifyShapeRule(*this);                                             \
  }
INGOT_BINARY_VERIFIER(AddOp)
INGOT_BINARY_VERIFIER(SubOp)
INGOT_BINARY_VERIFIER(MulOp)
INGOT_BINARY_VERIFIER(DivOp)
INGOT_BINARY_VERIFIER(MatMulOp)
#undef INGOT_BINARY_VERIFIER

/// matmul_integer's result: i32, or with a scale f32 after the scale (one
/// value or [n]), the bias ([n]) and the activation.
static LogicalResult verifyIntegerEpilogue(MatMulIntegerOp op, int64_t n) {
  if (!op.getScale()) {
    if (op.getBias() || op.getActivation())
      return op.emitOpError("bias and activation need a scale");
    if (!elementType(op.getResult()).isSignlessInteger(32))
      return op.emitOpError("result must be i32");
    return success();
  }
  if (!elementType(op.getResult()).isF32())
    return op.emitOpError("result must be f32 with a scale");
  auto isColumnVector = [&](Value v, bool scalarToo) {
    shape::Shape s = shapeOf(v.getType());
    const int64_t count = shape::numElements(s);
    return elementType(v).isF32() &&
           ((scalarToo && count == 1) ||
            (s.size() == 1 &&
             (s[0] == n || s[0] == shape::kDynamic || n == shape::kDynamic)));
  };
  if (!isColumnVector(op.getScale(), true))
    return op.emitOpError("scale must be one f32 value or one per column");
  if (op.getBias() && !isColumnVector(op.getBias(), false))
    return op.emitOpError("bias must be one f32 value per column");
  if (std::optional<StringRef> act = op.getActivation();
      act && !llvm::is_contained({StringRef("gelu"), StringRef("gelu_tanh"),
                                  StringRef("relu"), StringRef("silu")},
                                 *act))
    return op.emitOpError("activation must be gelu, gelu_tanh, relu or "
                          "silu, got ")
           << *act;
  return success();
}

LogicalResult MatMulIntegerOp::verify() {
  auto isQ8 = [](Type t) {
    return t.isUnsignedInteger(8) || t.isSignlessInteger(8);
  };
  Type a = elementType(getLhs()), b = elementType(getRhs());
  if (!isQ8(a) || !isQ8(b))
    return emitOpError("operands must be ui8 or i8, got ") << a << " and " << b;
  shape::Shape w = shapeOf(getRhs().getType());
  if (w.size() != 2)
    return emitOpError("rhs must be 2-D, got ") << shape::toString(w);
  if (failed(
          verifyZeroPoint(*this, getLhsZeroPoint(), a, shape::kDynamic, "")) ||
      failed(verifyZeroPoint(*this, getRhsZeroPoint(), b, w[1], "column")) ||
      failed(verifyIntegerEpilogue(*this, w[1])))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult DynamicQuantizeLinearOp::verify() {
  if (!elementType(getInput()).isF32())
    return emitOpError("input must be f32, got ") << elementType(getInput());
  if (!elementType(getResult()).isUnsignedInteger(8) ||
      !elementType(getZeroPoint()).isUnsignedInteger(8) ||
      !elementType(getScale()).isF32())
    return emitOpError("results must be ui8, f32 and ui8");
  if (!shapeOf(getScale().getType()).empty() ||
      !shapeOf(getZeroPoint().getType()).empty())
    return emitOpError("scale and zero point must be rank-0");
  return verifyShapeRule(*this);
}

LogicalResult PowOp::verify() {
  if (failed(verifySameElementType(*this, {getLhs()})))
    return failure();
  Type t = elementType(getLhs());
  if (!t.isF32() && !t.isSignlessInteger(64) && !t.isSignlessInteger(32))
    return emitOpError("base must be f32, i64 or i32, got ") << t;
  return verifyShapeRule(*this);
}

LogicalResult WhereOp::verify() {
  if (failed(verifySameElementType(*this, {getX(), getY()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult CastOp::verify() { return verifyShapeRule(*this); }

LogicalResult GemmOp::verify() {
  SmallVector<Value> all = {getA(), getB()};
  if (getC())
    all.push_back(getC());
  if (failed(verifySameElementType(*this, all)) ||
      failed(verifyFloat(*this, getA())))
    return failure();
  if (getType().getRank() != 2)
    return emitOpError("result must be 2-D");
  return verifyShapeRule(*this);
}

LogicalResult SoftmaxOp::verify() {
  int64_t axis, given = static_cast<int64_t>(getAxis());
  if (!shape::normalizeAxis(given, getType().getRank(), &axis))
    return emitOpError("axis ")
           << given << " out of range for rank " << getType().getRank();
  return verifyFloat(*this, getInput());
}

LogicalResult LayerNormOp::verify() {
  SmallVector<Value> all = {getInput(), getScale()};
  if (getBias())
    all.push_back(getBias());
  if (failed(verifySameElementType(*this, all)) ||
      failed(verifyFloat(*this, getInput())))
    return failure();
  int64_t axis, given = static_cast<int64_t>(getAxis());
  int64_t rank = getType().getRank();
  if (!shape::normalizeAxis(given, rank, &axis))
    return emitOpError("axis ") << given << " out of range for rank " << rank;
  // scale and bias broadcast unidirectionally to the normalised dims.
  shape::Shape full = shapeOf(getType());
  shape::Shape normalized(full.begin() + axis, full.end()), broadcastTo;
  for (Value v : {getScale(), getBias()}) {
    if (!v)
      continue;
    std::string error;
    shape::Shape s = shapeOf(v.getType());
    if (s.size() > normalized.size() ||
        !shape::broadcast({normalized, s}, &broadcastTo, &error) ||
        !isCompatibleShape(broadcastTo, normalized))
      return emitOpError("scale/bias shape ")
             << shape::toString(s) << " does not broadcast to the normalised "
             << "dims " << shape::toString(normalized);
  }
  return verifyShapeRule(*this);
}

LogicalResult ReduceMeanOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult TransposeOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ReshapeOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  if (getShape().getType().getRank() != 1)
    return emitOpError("shape operand must be 1-D");
  return verifyShapeRule(*this);
}

LogicalResult SqueezeOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult UnsqueezeOp::verify() {
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  if (failed(verifySameElementType(*this, getInputs())))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult GatherOp::verify() {
  // A quantised table's rows are decoded to f32, whatever type it had.
  auto table = getData().getDefiningOp<ParamOp>();
  const bool decoded =
      table && table.getQuant() && elementType(getResult()).isF32();
  if (!decoded && failed(verifySameElementType(*this, {getData()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult ShapeOp::verify() { return verifyShapeRule(*this); }

LogicalResult ConstantOfShapeOp::verify() { return verifyShapeRule(*this); }

LogicalResult TriluOp::verify() {
  if (getInput().getType().getRank() < 2)
    return emitOpError("input must have rank >= 2");
  if (getK() && getK().getType().getNumElements() > 1)
    return emitOpError("k must be a scalar");
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

#define GET_OP_CLASSES
#include "dialects/Ingot/IngotOps.cpp.inc"
