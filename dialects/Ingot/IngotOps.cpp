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

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("param name must not be empty");
  if (!getType().hasStaticShape())
    return emitOpError("param tensors must have a static shape");
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

LogicalResult PowOp::verify() {
  if (failed(verifySameElementType(*this, {getLhs()})) ||
      failed(verifyFloat(*this, getLhs())))
    return failure();
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
  if (failed(verifySameElementType(*this, {getData()})))
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

LogicalResult LinearOp::verify() {
  if (getWLayout() != "nk" && getWLayout() != "kn")
    return emitOpError("w_layout must be \"nk\" or \"kn\", got \"")
           << getWLayout() << "\"";
  if (failed(verifyFloat(*this, getInput())))
    return failure();
  if (getBias()) {
    auto w = getWeight().getType().getShape();
    int64_t n = getWLayout() == "nk" ? w[0] : w[1];
    auto b = getBias().getType().getShape();
    if (b.size() != 1 || (!ShapedType::isDynamic(b[0]) &&
                          !ShapedType::isDynamic(n) && b[0] != n))
      return emitOpError("bias must be [") << n << "]";
  }
  return verifyShapeRule(*this);
}

LogicalResult RmsNormOp::verify() {
  auto x = getInput().getType().getShape();
  auto w = getWeight().getType().getShape();
  if (x.empty() || w.size() != 1 ||
      (!ShapedType::isDynamic(x.back()) && !ShapedType::isDynamic(w[0]) &&
       x.back() != w[0]))
    return emitOpError("weight must be 1-D and match the last dim");
  if (failed(verifySameElementType(*this, {getInput()})))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult SiluMulOp::verify() {
  if (getGate().getType() != getUp().getType() ||
      getGate().getType().getShape() != getType().getShape())
    return emitOpError("gate, up and result must have one shape");
  return verifyFloat(*this, getGate());
}

/// x must be [tokens, heads * head_dim] with an even rotary_dim <= head_dim.
LogicalResult RopeOp::verify() {
  int64_t heads = static_cast<int64_t>(getNumHeads());
  int64_t dim = static_cast<int64_t>(getHeadDim());
  int64_t rotary = static_cast<int64_t>(getRotaryDim());
  auto x = getInput().getType().getShape();
  if (x.size() != 2 || (!ShapedType::isDynamic(x[1]) && x[1] != heads * dim))
    return emitOpError("input must be [tokens, ") << heads * dim << "]";
  if (rotary <= 0 || rotary > dim || rotary % 2)
    return emitOpError("rotary_dim must be even and in (0, head_dim]");
  if (getScaling() != "none" && getScaling() != "llama3")
    return emitOpError("scaling must be \"none\" or \"llama3\"");
  return verifyShapeRule(*this);
}

LogicalResult PagedAttentionOp::verify() {
  int64_t heads = static_cast<int64_t>(getNumHeads());
  int64_t kvHeads = static_cast<int64_t>(getNumKvHeads());
  int64_t dim = static_cast<int64_t>(getHeadDim());
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads)
    return emitOpError("num_heads must be a positive multiple of num_kv_heads");
  auto lastDim = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  auto q = lastDim(getQuery()), k = lastDim(getKey()), v = lastDim(getValue());
  if (q.size() != 2 || k.size() != 2 || v.size() != 2)
    return emitOpError("query, key and value must be [tokens, features]");
  if ((!ShapedType::isDynamic(q[1]) && q[1] != heads * dim) ||
      (!ShapedType::isDynamic(k[1]) && k[1] != kvHeads * dim) ||
      (!ShapedType::isDynamic(v[1]) && v[1] != kvHeads * dim))
    return emitOpError("features must be num_heads*head_dim (query) and "
                       "num_kv_heads*head_dim (key, value)");
  if (getBlockTables().getType().getRank() != 2)
    return emitOpError("block_tables must be [seqs, blocks]");
  return verifyShapeRule(*this);
}

#define GET_OP_CLASSES
#include "dialects/Ingot/IngotOps.cpp.inc"
