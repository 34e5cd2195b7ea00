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

namespace ingot::graph {

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
      .Default([](Operation *) -> std::optional<bool> { return std::nullopt; });
}

} // namespace ingot::graph
