//===- FuseAddNorm.cpp - Residual add + norm into one op ------------------===//
//
// A pre-norm decoder adds each sub-layer's output to the residual stream
// and immediately normalises the sum for the next sub-layer: two passes
// over the stream, one of them re-reading what the other just wrote. The
// fused op reads both addends once and writes the sum and the normalised
// value in the same row sweep.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace ingot {
#define GEN_PASS_DEF_FUSEADDNORM
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// The add feeding `input` if it adds two tensors of its own type (no
/// broadcasting: the fused kernels add row by row).
AddOp sameShapeAdd(Value input) {
  auto add = input.getDefiningOp<AddOp>();
  if (!add || add.getLhs().getType() != add.getType() ||
      add.getRhs().getType() != add.getType())
    return nullptr;
  if (!cast<RankedTensorType>(add.getType()).getElementType().isF32())
    return nullptr;
  return add;
}

/// Makes `v` available at `at` (the fused op replaces the add there): a
/// block argument or an earlier value already is; a weight reference made
/// later (importers create a norm's param where they build the norm) has
/// no operands and moves up. False if neither holds.
bool makeAvailableAt(Value v, Operation *at) {
  if (!v)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || (def->getBlock() == at->getBlock() && def->isBeforeInBlock(at)))
    return true;
  if (!isa<ParamOp, ConstantOp>(def) || def->getBlock() != at->getBlock())
    return false;
  def->moveBefore(at);
  return true;
}

/// Replaces `add` and `norm` by `fused`: the add's users read the sum, the
/// norm's users the normalised value.
void replaceBoth(AddOp add, Operation *norm, Operation *fused) {
  norm->getResult(0).replaceAllUsesWith(fused->getResult(1));
  norm->erase();
  add.getResult().replaceAllUsesWith(fused->getResult(0));
  add.erase();
}

struct FuseAddNormPass
    : public ingot::impl::FuseAddNormBase<FuseAddNormPass> {
  using FuseAddNormBase::FuseAddNormBase;

  void runOnOperation() override {
    SmallVector<Operation *> norms;
    getOperation().walk([&](Operation *op) {
      if (isa<RmsNormOp>(op) || (layerNorm && isa<LayerNormOp>(op)))
        norms.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : norms) {
      if (auto norm = dyn_cast<RmsNormOp>(op)) {
        AddOp add = sameShapeAdd(norm.getInput());
        if (!add || !makeAvailableAt(norm.getWeight(), add))
          continue;
        b.setInsertionPoint(add);
        auto fused = AddRmsNormOp::create(
            b, norm.getLoc(), TypeRange{add.getType(), norm.getType()},
            add.getLhs(), add.getRhs(), norm.getWeight(),
            norm.getEpsilonAttr());
        replaceBoth(add, norm, fused);
        continue;
      }
      auto norm = cast<LayerNormOp>(op);
      auto type = cast<RankedTensorType>(norm.getInput().getType());
      // The fused kernel normalises the last dim only, with 1-D params.
      // (I64Attr getters return the bits as uint64_t.)
      int64_t axis = static_cast<int64_t>(norm.getAxis());
      if (axis < 0)
        axis += type.getRank();
      auto scale = cast<RankedTensorType>(norm.getScale().getType());
      if (axis != type.getRank() - 1 || scale.getRank() != 1 ||
          (norm.getBias() &&
           norm.getBias().getType() != norm.getScale().getType()))
        continue;
      AddOp add = sameShapeAdd(norm.getInput());
      if (!add || !makeAvailableAt(norm.getScale(), add) ||
          !makeAvailableAt(norm.getBias(), add))
        continue;
      b.setInsertionPoint(add);
      auto fused = AddLayerNormOp::create(
          b, norm.getLoc(), TypeRange{add.getType(), norm.getType()},
          add.getLhs(), add.getRhs(), norm.getScale(), norm.getBias(),
          norm.getEpsilonAttr());
      replaceBoth(add, norm, fused);
    }
  }
};

} // namespace
