//===- IngotControlOps.cpp - Verifier of ingot.if -------------------------===//
#include "dialects/Ingot/IngotDialect.h"

using namespace mlir;
using namespace ingot::graph;

YieldOp IfOp::yieldOf(unsigned region) {
  Region &r = region == 0 ? getThenRegion() : getElseRegion();
  return cast<YieldOp>(r.front().getTerminator());
}

LogicalResult IfOp::verify() {
  if (getCondition().getType().getNumElements() != 1)
    return emitOpError("condition must hold one element, got ")
           << getCondition().getType();
  for (unsigned r = 0; r < 2; ++r) {
    Region &region = r == 0 ? getThenRegion() : getElseRegion();
    if (region.empty() || !isa<YieldOp>(region.front().back()))
      return emitOpError(r == 0 ? "then" : "else")
             << " region must end in ingot.yield";
    YieldOp yield = yieldOf(r);
    if (yield.getValues().size() != getNumResults())
      return emitOpError(r == 0 ? "then" : "else")
             << " branch yields " << yield.getValues().size() << " values for "
             << getNumResults() << " results";
    for (auto [i, pair] :
         llvm::enumerate(llvm::zip(yield.getValues(), getResults()))) {
      auto given = cast<RankedTensorType>(std::get<0>(pair).getType());
      auto result = cast<RankedTensorType>(std::get<1>(pair).getType());
      if (given.getElementType() != result.getElementType() ||
          !isCompatibleShape(shapeOf(result), shapeOf(given)))
        return emitOpError(r == 0 ? "then" : "else")
               << " branch yields " << given << " as result " << i
               << ", which is " << result;
    }
  }
  return success();
}
