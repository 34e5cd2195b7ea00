//===- PropagateShapes.cpp - Refine result types from shape rules ---------===//
#include "passes/Passes.h"
#include "dialects/Ingot/ShapeInference.h"

#include "llvm/ADT/DenseMap.h"

namespace ingot {
#define GEN_PASS_DEF_PROPAGATESHAPES
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// The more precise of two compatible shapes, dim by dim.
SmallVector<int64_t> joinShapes(ArrayRef<int64_t> typeDims,
                                const shape::Shape &inferred) {
  SmallVector<int64_t> dims(typeDims);
  for (size_t i = 0; i < dims.size(); ++i)
    if (ShapedType::isDynamic(dims[i]) && inferred[i] != shape::kDynamic)
      dims[i] = inferred[i];
  return dims;
}

struct PropagateShapesPass
    : public ingot::impl::PropagateShapesBase<PropagateShapesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Values of shape vectors flow op to op (Shape -> Concat -> Reshape)
    // even where no constant exists yet in the IR.
    llvm::DenseMap<Value, ValueInfo> known;
    WalkResult result = func.walk([&](Operation *op) {
      if (op->getDialect() != getContext().getLoadedDialect<IngotDialect>() ||
          op->getNumResults() != 1)
        return WalkResult::advance();
      std::vector<ValueInfo> ins, outs;
      for (Value v : op->getOperands()) {
        auto it = known.find(v);
        ins.push_back(it != known.end() ? it->second : valueInfoFromIR(v));
      }
      std::string error;
      if (failed(inferValueInfo(op, ins, outs, error))) {
        op->emitOpError(error);
        return WalkResult::interrupt();
      }
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      if (!isCompatibleShape(shapeOf(type), outs[0].shape)) {
        op->emitOpError("result type ")
            << type << " contradicts inferred shape "
            << shape::toString(outs[0].shape);
        return WalkResult::interrupt();
      }
      op->getResult(0).setType(RankedTensorType::get(
          joinShapes(type.getShape(), outs[0].shape), type.getElementType()));
      known[op->getResult(0)] = std::move(outs[0]);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The signature follows the refined values it returns.
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    func.setType(FunctionType::get(&getContext(),
                                   func.getFunctionType().getInputs(),
                                   ret.getOperandTypes()));
  }
};

} // namespace
