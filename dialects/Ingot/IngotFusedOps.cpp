//===- IngotFusedOps.cpp - Verifiers and shape rules of fused ops ---------===//
//
// The program encoding is checked by the runtime's parser
// (ingot/FusedProgram.h), so the compiler never accepts a program the
// kernel would reject.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"
#include "dialects/Ingot/VerifierUtil.h"

#include "ingot/FusedProgram.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

LogicalResult FusedElementwiseOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  std::vector<bool> isI32;
  for (Value v : getInputs()) {
    Type t = elementType(v);
    if (!t.isF32() && !t.isSignlessInteger(32))
      return emitOpError("inputs must be f32 or i32, got ") << v.getType();
    isI32.push_back(!t.isF32());
  }
  if (!elementType(getResult()).isF32())
    return emitOpError("result must be f32, got ") << getType();
  fused::Program program;
  std::string error;
  std::vector<int64_t> args(getArgs().begin(), getArgs().end());
  std::vector<double> constants(getConstants().begin(), getConstants().end());
  if (!fused::parseProgram(getOps(), args, constants,
                           static_cast<int64_t>(getInputs().size()), &program,
                           &error))
    return emitOpError(error);
  if (!fused::checkInputKinds(program, isI32, &error))
    return emitOpError(error);
  if (bool(getReduce()) != bool(getKeepdims()))
    return emitOpError("`reduce` and `keepdims` come together");
  if (getReduce() && !llvm::is_contained({"mean", "sum", "max"}, *getReduce()))
    return emitOpError("unknown reduction \"") << *getReduce() << "\"";
  return verifyShapeRule(*this);
}

LogicalResult AttentionOp::verify() {
  for (Value v : getOperands())
    if (!elementType(v).isF32())
      return emitOpError("operands must be f32, got ") << v.getType();
  if (getMask() && cast<RankedTensorType>(getMask().getType()).getRank() > 4)
    return emitOpError("mask must have rank <= 4, got ") << getMask().getType();
  return verifyShapeRule(*this);
}

namespace ingot::graph {

namespace {

/// [B, Sq, H, Dv] from q [B, Sq, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv]
/// and a mask broadcasting to [B, H, Sq, Sk].
bool inferAttention(ArrayRef<ValueInfo> ins, shape::Shape &out,
                    std::string &error) {
  const shape::Shape &q = ins[0].shape, &k = ins[1].shape, &v = ins[2].shape;
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) {
    error = "query, key and value must be [batch, seq, heads, dim]";
    return false;
  }
  auto agree = [](int64_t a, int64_t b) {
    return a == shape::kDynamic || b == shape::kDynamic || a == b;
  };
  if (!agree(q[0], k[0]) || !agree(k[0], v[0]) || !agree(q[2], k[2]) ||
      !agree(k[2], v[2]) || !agree(q[3], k[3]) || !agree(k[1], v[1])) {
    error = "query " + shape::toString(q) + ", key " + shape::toString(k) +
            " and value " + shape::toString(v) +
            " disagree on batch, heads, key length or head dim";
    return false;
  }
  if (ins.size() > 3) {
    const shape::Shape scores = {q[0], q[2], q[1], k[1]};
    shape::Shape joined;
    if (!shape::broadcast({scores, ins[3].shape}, &joined, &error))
      return false;
    if (joined.size() != 4) {
      error = "mask " + shape::toString(ins[3].shape) +
              " does not broadcast to the scores " + shape::toString(scores);
      return false;
    }
  }
  out = {q[0], q[1], q[2], v[3]};
  return true;
}

} // namespace

std::optional<bool> inferFusedOp(Operation *op, ArrayRef<ValueInfo> ins,
                                 shape::Shape &out,
                                 std::optional<std::vector<int64_t>> &values,
                                 std::string &error) {
  (void)values; // f32 results carry no tracked values
  return llvm::TypeSwitch<Operation *, std::optional<bool>>(op)
      .Case<FusedElementwiseOp>(
          [&](FusedElementwiseOp f) -> std::optional<bool> {
            std::vector<shape::Shape> shapes;
            for (const ValueInfo &v : ins)
              shapes.push_back(v.shape);
            if (!shape::broadcast(shapes, &out, &error))
              return false;
            if (!f.getReduce())
              return true;
            // A trailing reduction over the last axis.
            if (out.empty()) {
              error = "a reduction needs a result of rank >= 1";
              return false;
            }
            if (f.getKeepdims().value_or(1))
              out.back() = 1;
            else
              out.pop_back();
            return true;
          })
      .Case<AttentionOp>([&](AttentionOp) -> std::optional<bool> {
        return inferAttention(ins, out, error);
      })
      .Default([](Operation *) -> std::optional<bool> { return std::nullopt; });
}

} // namespace ingot::graph
