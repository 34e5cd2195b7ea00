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
    if (!q || !(format == "q8" || format == "q4" || format == "q4m") ||
        q.getGroup() != 32 || getType().getDimSize(0) % 16 ||
        getType().getDimSize(1) % 32)
      return emitOpError("layout \"q16\" needs a q8, q4 or q4m param in "
                         "groups of 32 with rows a multiple of 16 and "
                         "columns of 32, got ")
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

LogicalResult MatMulIntegerOp::verify() {
  auto isQ8 = [](Type t) {
    return t.isUnsignedInteger(8) || t.isSignlessInteger(8);
  };
  Type a = elementType(getLhs()), b = elementType(getRhs());
  if (!isQ8(a) || !isQ8(b))
    return emitOpError("operands must be ui8 or i8, got ") << a << " and " << b;
  if (!elementType(getResult()).isSignlessInteger(32))
    return emitOpError("result must be i32");
  shape::Shape w = shapeOf(getRhs().getType());
  if (w.size() != 2)
    return emitOpError("rhs must be 2-D, got ") << shape::toString(w);
  if (failed(
          verifyZeroPoint(*this, getLhsZeroPoint(), a, shape::kDynamic, "")) ||
      failed(verifyZeroPoint(*this, getRhsZeroPoint(), b, w[1], "column")))
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
  StringRef layout = getWLayout();
  if (layout != "nk" && layout != "kn" && layout != "nk16" && layout != "q16")
    return emitOpError("w_layout must be \"nk\", \"kn\", \"nk16\" or "
                       "\"q16\", got \"")
           << layout << "\"";
  StringRef act = getActivation();
  if (act != "none" && act != "relu" && act != "silu" && act != "gelu" &&
      act != "gelu_tanh")
    return emitOpError("activation must be none, relu, silu, gelu or "
                       "gelu_tanh, got \"")
           << act << "\"";
  if (failed(verifyFloat(*this, getInput())))
    return failure();
  if (getBias()) {
    auto w = getWeight().getType().getShape();
    int64_t n = layout == "kn" ? w[1] : w[0];
    auto b = getBias().getType().getShape();
    if (b.size() != 1 || (!ShapedType::isDynamic(b[0]) &&
                          !ShapedType::isDynamic(n) && b[0] != n))
      return emitOpError("bias must be [") << n << "]";
  }
  if (getResidual() && getResidual().getType() != getType())
    return emitOpError("residual must have the result type ") << getType();
  return verifyShapeRule(*this);
}

/// The shared checks of add_rms_norm / add_layer_norm: a + b of one type,
/// a 1-D weight matching the last dim, both results of that type.
static LogicalResult verifyAddNorm(Operation *op, Value lhs, Value rhs,
                                   Value weight) {
  auto type = cast<RankedTensorType>(lhs.getType());
  if (rhs.getType() != type || op->getResult(0).getType() != type ||
      op->getResult(1).getType() != type)
    return op->emitOpError("operands and results must have one type");
  auto x = type.getShape();
  auto w = cast<RankedTensorType>(weight.getType()).getShape();
  if (x.empty() || w.size() != 1 ||
      (!ShapedType::isDynamic(x.back()) && !ShapedType::isDynamic(w[0]) &&
       x.back() != w[0]))
    return op->emitOpError("weight must be 1-D and match the last dim");
  return verifyFloat(op, lhs);
}

LogicalResult AddRmsNormOp::verify() {
  return verifyAddNorm(*this, getLhs(), getRhs(), getWeight());
}

LogicalResult AddLayerNormOp::verify() {
  if (failed(verifyAddNorm(*this, getLhs(), getRhs(), getScale())))
    return failure();
  if (getBias() && getBias().getType() != getScale().getType())
    return emitOpError("bias must have the scale's type");
  return success();
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
  auto gate = getGate().getType().getShape();
  auto out = getType().getShape();
  if (getUp()) {
    if (getGate().getType() != getUp().getType() || gate != out)
      return emitOpError("gate, up and result must have one shape");
    return verifyFloat(*this, getGate());
  }
  // One operand: gate and up side by side in its last dim.
  if (gate.empty() || gate.size() != out.size() ||
      gate.drop_back() != out.drop_back() ||
      (!ShapedType::isDynamic(gate.back()) &&
       !ShapedType::isDynamic(out.back()) && gate.back() != 2 * out.back()))
    return emitOpError("a single operand must be the result's shape with a "
                       "last dim twice as large");
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
  if (getScaling() != "none" && getScaling() != "llama3" &&
      getScaling() != "linear")
    return emitOpError("scaling must be \"none\", \"linear\" or \"llama3\"");
  return verifyShapeRule(*this);
}

/// Heads, feature widths and offsets shared by both attention ops: q/k/v
/// are columns [offset, offset + heads * head_dim) of their operands.
static LogicalResult verifyAttention(Operation *op, Value q, Value k, Value v,
                                     Value blockTables, int64_t heads,
                                     int64_t kvHeads, int64_t dim,
                                     int64_t qOff, int64_t kOff, int64_t vOff) {
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads)
    return op->emitOpError(
        "num_heads must be a positive multiple of num_kv_heads");
  auto shapeOf = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getShape();
  };
  auto qs = shapeOf(q), ks = shapeOf(k), vs = shapeOf(v);
  if (qs.size() != 2 || ks.size() != 2 || vs.size() != 2)
    return op->emitOpError("query, key and value must be [tokens, features]");
  if (qOff < 0 || kOff < 0 || vOff < 0)
    return op->emitOpError("offsets must be >= 0");
  auto fits = [](int64_t cols, int64_t off, int64_t width) {
    return ShapedType::isDynamic(cols) || off + width <= cols;
  };
  if (!fits(qs[1], qOff, heads * dim) || !fits(ks[1], kOff, kvHeads * dim) ||
      !fits(vs[1], vOff, kvHeads * dim))
    return op->emitOpError("query needs num_heads*head_dim and key/value "
                           "num_kv_heads*head_dim features from their offsets");
  auto out = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  if (out.size() != 2 ||
      (!ShapedType::isDynamic(out[1]) && out[1] != heads * dim))
    return op->emitOpError("result must be [tokens, num_heads*head_dim]");
  if (cast<RankedTensorType>(blockTables.getType()).getRank() != 2)
    return op->emitOpError("block_tables must be [seqs, blocks]");
  return success();
}

LogicalResult PagedAttentionOp::verify() {
  if (failed(verifyAttention(*this, getQuery(), getKey(), getValue(),
                             getBlockTables(), getNumHeads(), getNumKvHeads(),
                             getHeadDim(), getQOffset(), getKOffset(),
                             getVOffset())))
    return failure();
  return verifyShapeRule(*this);
}

LogicalResult RopePagedAttentionOp::verify() {
  if (failed(verifyAttention(*this, getQuery(), getKey(), getValue(),
                             getBlockTables(), getNumHeads(), getNumKvHeads(),
                             getHeadDim(), getQOffset(), getKOffset(),
                             getVOffset())))
    return failure();
  int64_t rotary = getRotaryDim();
  if (rotary <= 0 || rotary > int64_t(getHeadDim()) || rotary % 2)
    return emitOpError("rotary_dim must be even and in (0, head_dim]");
  if (getScaling() != "none" && getScaling() != "llama3" &&
      getScaling() != "linear")
    return emitOpError("scaling must be \"none\", \"linear\" or \"llama3\"");
  return verifyShapeRule(*this);
}

#define GET_OP_CLASSES
#include "dialects/Ingot/IngotOps.cpp.inc"
