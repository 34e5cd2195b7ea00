//===- IngotLlmOps.cpp - Verifiers of the LLM building blocks -------------===//
//
// linear, the residual norms, silu_mul, rope and the paged attentions: each
// checks its operands' types and layouts, then that the result type agrees
// with the op's shape rule (ShapeInference.cpp) wherever dims are static.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/VerifierUtil.h"

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

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
                                     int64_t kvHeads, int64_t dim, int64_t qOff,
                                     int64_t kOff, int64_t vOff) {
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
