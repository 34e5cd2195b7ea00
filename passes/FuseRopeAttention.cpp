//===- FuseRopeAttention.cpp - RoPE and qkv slices into the attention -----===//
//
// After ingot-merge-linears, q, k and v are column slices of one qkv
// tensor, and q, k are rotated by rope before the attention writes k to the
// cache: two copies and two rotations through memory per layer. The
// attention reads its operands at column offsets and rotates q and k
// itself (rope_paged_attention), so neither copy nor rotated tensor exists.
//
//===----------------------------------------------------------------------===//
#include "passes/ColumnSlice.h"
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_FUSEROPEATTENTION
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// The rope attributes that must agree between q's and k's rope.
bool sameRotation(RopeOp a, RopeOp b) {
  return a.getHeadDim() == b.getHeadDim() &&
         a.getRotaryDim() == b.getRotaryDim() && a.getTheta() == b.getTheta() &&
         a.getScaling() == b.getScaling() && a.getFactor() == b.getFactor() &&
         a.getLowFreqFactor() == b.getLowFreqFactor() &&
         a.getHighFreqFactor() == b.getHighFreqFactor() &&
         a.getOriginalMaxPositions() == b.getOriginalMaxPositions();
}

/// An operand of the attention: the tensor it reads and the column offset.
struct Operand {
  Value tensor;
  int64_t offset;
};

/// `v` read at `offset`, or the tensor it is a column slice of at the
/// slice's begin plus `offset` (the slice's width is the attention's for
/// that operand, checked by the caller's types).
Operand throughSlice(Value v, int64_t offset) {
  if (std::optional<ColumnSlice> s = matchColumnSlice(v))
    return {s->source, s->begin + offset};
  return {v, offset};
}

/// paged_attention(rope(q), rope(k), v) -> rope_paged_attention, and column
/// slice operands -> offsets into the sliced tensor.
struct FoldIntoAttention : OpRewritePattern<PagedAttentionOp> {
  FoldIntoAttention(MLIRContext *ctx, bool fuseRope)
      : OpRewritePattern(ctx), fuseRope(fuseRope) {}

  LogicalResult matchAndRewrite(PagedAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value q = op.getQuery(), k = op.getKey();
    auto qRope = q.getDefiningOp<RopeOp>(), kRope = k.getDefiningOp<RopeOp>();
    // Only when both rotations are this attention's alone (else the rope
    // kernels would run anyway) and rotate by its positions.
    bool rope = fuseRope && qRope && kRope && q.hasOneUse() && k.hasOneUse() &&
                qRope.getPositions() == op.getPositions() &&
                kRope.getPositions() == op.getPositions() &&
                sameRotation(qRope, kRope) &&
                qRope.getHeadDim() == op.getHeadDim() &&
                qRope.getNumHeads() == op.getNumHeads() &&
                kRope.getNumHeads() == op.getNumKvHeads();
    if (rope) {
      q = qRope.getInput();
      k = kRope.getInput();
    }
    // Offsets the op already has add up (a rewritten op that still reads
    // a column slice is matched again).
    Operand qo = throughSlice(q, static_cast<int64_t>(op.getQOffset())),
            ko = throughSlice(k, static_cast<int64_t>(op.getKOffset())),
            vo = throughSlice(op.getValue(),
                              static_cast<int64_t>(op.getVOffset()));
    bool sliced = qo.tensor != q || ko.tensor != k ||
                  vo.tensor != op.getValue();
    if (!rope && !sliced)
      return rewriter.notifyMatchFailure(op, "no rope or column slice");
    rewriter.setInsertionPoint(op);
    auto i64 = [&](int64_t v) { return rewriter.getI64IntegerAttr(v); };
    Operation *fused;
    if (rope) {
      fused = RopePagedAttentionOp::create(
          rewriter, op.getLoc(), op.getType(), qo.tensor, ko.tensor, vo.tensor,
          op.getPositions(), op.getSlotMapping(), op.getBlockTables(),
          op.getQueryEnds(), op.getLayerAttr(), op.getNumHeadsAttr(),
          op.getNumKvHeadsAttr(), op.getHeadDimAttr(), op.getScaleAttr(),
          op.getSlidingWindowAttr(), i64(qo.offset), i64(ko.offset),
          i64(vo.offset), qRope.getRotaryDimAttr(), qRope.getThetaAttr(),
          qRope.getScalingAttr(), qRope.getFactorAttr(),
          qRope.getLowFreqFactorAttr(), qRope.getHighFreqFactorAttr(),
          qRope.getOriginalMaxPositionsAttr(), op.getSoftcapAttr());
    } else {
      fused = PagedAttentionOp::create(
          rewriter, op.getLoc(), op.getType(), qo.tensor, ko.tensor, vo.tensor,
          op.getPositions(), op.getSlotMapping(), op.getBlockTables(),
          op.getQueryEnds(), op.getLayerAttr(), op.getNumHeadsAttr(),
          op.getNumKvHeadsAttr(), op.getHeadDimAttr(), op.getScaleAttr(),
          op.getSlidingWindowAttr(), i64(qo.offset), i64(ko.offset),
          i64(vo.offset), op.getSoftcapAttr());
    }
    rewriter.replaceOp(op, fused->getResults());
    // The ropes are dead now; the driver erases them (and dead slices).
    return success();
  }

  bool fuseRope;
};

struct FuseRopeAttentionPass
    : public ingot::impl::FuseRopeAttentionBase<FuseRopeAttentionPass> {
  using FuseRopeAttentionBase::FuseRopeAttentionBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoAttention>(&getContext(), fuseRope);
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
