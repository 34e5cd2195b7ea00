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
#include "passes/Passes.h"

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

/// `v` itself, or the tensor it is a column slice of (the slice's width is
/// the attention's for that operand, checked by the caller's types).
Operand throughSlice(Value v) {
  if (std::optional<ColumnSlice> s = matchColumnSlice(v))
    return {s->source, s->begin};
  return {v, 0};
}

struct FuseRopeAttentionPass
    : public ingot::impl::FuseRopeAttentionBase<FuseRopeAttentionPass> {
  using FuseRopeAttentionBase::FuseRopeAttentionBase;

  void runOnOperation() override {
    SmallVector<PagedAttentionOp> ops;
    getOperation().walk([&](PagedAttentionOp op) { ops.push_back(op); });
    for (PagedAttentionOp op : ops)
      fuse(op);
  }

  void fuse(PagedAttentionOp op) {
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
    Operand qo = throughSlice(q), ko = throughSlice(k),
            vo = throughSlice(op.getValue());
    bool sliced = qo.tensor != q || ko.tensor != k ||
                  vo.tensor != op.getValue();
    if (!rope && !sliced)
      return;
    OpBuilder b(op);
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    Operation *fused;
    if (rope) {
      fused = RopePagedAttentionOp::create(
          b, op.getLoc(), op.getType(), qo.tensor, ko.tensor, vo.tensor,
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
          b, op.getLoc(), op.getType(), qo.tensor, ko.tensor, vo.tensor,
          op.getPositions(), op.getSlotMapping(), op.getBlockTables(),
          op.getQueryEnds(), op.getLayerAttr(), op.getNumHeadsAttr(),
          op.getNumKvHeadsAttr(), op.getHeadDimAttr(), op.getScaleAttr(),
          op.getSlidingWindowAttr(), i64(qo.offset), i64(ko.offset),
          i64(vo.offset), op.getSoftcapAttr());
    }
    op.getResult().replaceAllUsesWith(fused->getResult(0));
    op.erase();
    // The ropes (and slices) are dead now; canonicalisation removes them.
    for (RopeOp r : {qRope, kRope})
      if (rope && r->use_empty())
        r.erase();
  }
};

} // namespace
