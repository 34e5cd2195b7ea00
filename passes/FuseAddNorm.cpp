//===- FuseAddNorm.cpp - Residual add + norm into one op ------------------===//
//
// A pre-norm decoder adds each sub-layer's output to the residual stream
// and immediately normalises the sum for the next sub-layer: two passes
// over the stream, one of them re-reading what the other just wrote. The
// fused op reads both addends once and writes the sum and the normalised
// value in the same row sweep.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

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

/// Whether `v` is available at `at` (the fused op replaces the add there),
/// or can be made so: a weight reference made later (importers create a
/// norm's param where they build the norm) has no operands and may move up.
bool availableAt(Value v, Operation *at) {
  if (!v)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || (def->getBlock() == at->getBlock() && def->isBeforeInBlock(at)))
    return true;
  return isa<ParamOp, ConstantOp>(def) && def->getBlock() == at->getBlock();
}

/// Moves `v`'s weight reference above `at` if it is defined after it.
void moveAbove(PatternRewriter &rewriter, Value v, Operation *at) {
  Operation *def = v ? v.getDefiningOp() : nullptr;
  if (def && !def->isBeforeInBlock(at))
    rewriter.moveOpBefore(def, at);
}

/// Replaces `add` and `norm` by `fused`: the add's users read the sum, the
/// norm's users the normalised value.
void replaceBoth(PatternRewriter &rewriter, AddOp add, Operation *norm,
                 Operation *fused) {
  rewriter.replaceOp(norm, fused->getResult(1));
  rewriter.replaceOp(add, fused->getResult(0));
}

/// rms_norm(add(a, b), w) -> add_rms_norm(a, b, w).
struct FuseAddRmsNorm : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RmsNormOp norm,
                                PatternRewriter &rewriter) const override {
    AddOp add = sameShapeAdd(norm.getInput());
    if (!add || !availableAt(norm.getWeight(), add))
      return rewriter.notifyMatchFailure(norm, "no same-shape f32 add");
    moveAbove(rewriter, norm.getWeight(), add);
    rewriter.setInsertionPoint(add);
    auto fused = AddRmsNormOp::create(
        rewriter, norm.getLoc(), TypeRange{add.getType(), norm.getType()},
        add.getLhs(), add.getRhs(), norm.getWeight(), norm.getEpsilonAttr());
    replaceBoth(rewriter, add, norm, fused);
    return success();
  }
};

/// Last-axis layer_norm(add(a, b), g, [bias]) -> add_layer_norm.
struct FuseAddLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp norm,
                                PatternRewriter &rewriter) const override {
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
      return rewriter.notifyMatchFailure(norm, "not a last-axis 1-D norm");
    AddOp add = sameShapeAdd(norm.getInput());
    if (!add || !availableAt(norm.getScale(), add) ||
        !availableAt(norm.getBias(), add))
      return rewriter.notifyMatchFailure(norm, "no same-shape f32 add");
    moveAbove(rewriter, norm.getScale(), add);
    moveAbove(rewriter, norm.getBias(), add);
    rewriter.setInsertionPoint(add);
    auto fused = AddLayerNormOp::create(
        rewriter, norm.getLoc(), TypeRange{add.getType(), norm.getType()},
        add.getLhs(), add.getRhs(), norm.getScale(), norm.getBias(),
        norm.getEpsilonAttr());
    replaceBoth(rewriter, add, norm, fused);
    return success();
  }
};

struct FuseAddNormPass
    : public ingot::impl::FuseAddNormBase<FuseAddNormPass> {
  using FuseAddNormBase::FuseAddNormBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAddRmsNorm>(&getContext());
    if (layerNorm)
      patterns.add<FuseAddLayerNorm>(&getContext());
    // Top-down: when several norms read one sum, the first absorbs the add.
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
