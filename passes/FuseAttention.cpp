//===- FuseAttention.cpp - Encoder attention chains into one op -----------===//
//
// Encoder exports (BERT and its family) write attention per head as
// reshape → transpose of q, k and v, matmul, a scale, an additive mask,
// softmax, matmul and a transpose back: [B, H, S, S] scores go through
// memory three times and four transposes copy q, k, v and the result.
// `ingot.attention` reads q, k, v where the reshapes left them and writes
// its result in the layout the transpose back produced.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;
using ingot::scalarConstant;

namespace {

/// `v` as transpose(x, perm) of a rank-4 x: x, else null.
Value untranspose(Value v, ArrayRef<int64_t> perm) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || t.getPerm() != perm ||
      cast<RankedTensorType>(t.getInput().getType()).getRank() != 4)
    return nullptr;
  return t.getInput();
}

/// The scores before scaling and the scale: s / c, s · c, c · s or s.
std::pair<Value, double> unscale(Value v) {
  Operation *op = v.getDefiningOp();
  if (op && op->hasOneUse() && isa<DivOp, MulOp>(op)) {
    Value a = op->getOperand(0), b = op->getOperand(1);
    if (std::optional<double> c = scalarConstant(b); c && *c != 0)
      return {a, isa<DivOp>(op) ? 1 / *c : *c};
    if (std::optional<double> c = scalarConstant(a); c && isa<MulOp>(op))
      return {b, *c};
  }
  return {v, 1.0};
}

/// q [B, Sq, H, D], k [B, Sk, H, D] and v [B, Sk, H, Dv] agree where their
/// dims are known (the matmuls could also broadcast a batch of 1).
bool sameHeads(Value q, Value k, Value v) {
  auto dims = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getShape();
  };
  ArrayRef<int64_t> a = dims(q), b = dims(k), c = dims(v);
  auto same = [](int64_t x, int64_t y) {
    return x == y && x != ShapedType::kDynamic;
  };
  // Batch and heads equal and static, or batch dynamic in all three.
  const bool batch = same(a[0], b[0]) ? same(b[0], c[0])
                                      : ShapedType::isDynamic(a[0]) &&
                                            ShapedType::isDynamic(b[0]) &&
                                            ShapedType::isDynamic(c[0]);
  return batch && same(a[2], b[2]) && same(b[2], c[2]) && same(a[3], b[3]);
}

constexpr int64_t kToHeads[] = {0, 2, 1, 3};  // [B,S,H,D] -> [B,H,S,D]
constexpr int64_t kToHeadsT[] = {0, 2, 3, 1}; // [B,S,H,D] -> [B,H,D,S]

/// matmul(softmax(scale · matmul(q', k'ᵀ) [+ mask]), v') with q', k'ᵀ, v'
/// transposes of [B, S, H, D] tensors -> attention(q, k, v, mask).
struct FuseAttentionChain : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp pv,
                                PatternRewriter &rewriter) const override {
    auto softmax = pv.getLhs().getDefiningOp<SoftmaxOp>();
    Value v = untranspose(pv.getRhs(), kToHeads);
    const int64_t axis = softmax ? int64_t(softmax.getAxis()) : 0;
    if (!softmax || !softmax->hasOneUse() || !v || (axis != -1 && axis != 3))
      return rewriter.notifyMatchFailure(pv, "not softmax(..) · v per head");
    auto scoresType = cast<RankedTensorType>(softmax.getType());
    Value x = softmax.getInput(), mask;
    if (auto add = x.getDefiningOp<AddOp>(); add && add->hasOneUse()) {
      // The mask is the operand that is not the scaled scores' matmul.
      for (auto [s, m] : {std::pair{add.getLhs(), add.getRhs()},
                          std::pair{add.getRhs(), add.getLhs()}})
        if (unscale(s).first.getDefiningOp<MatMulOp>() &&
            s.getType() == scoresType) {
          x = s;
          mask = m;
          break;
        }
    }
    auto [raw, scale] = unscale(x);
    auto qk = raw.getDefiningOp<MatMulOp>();
    if (!qk || !qk->hasOneUse())
      return rewriter.notifyMatchFailure(pv, "no q·kᵀ matmul under it");
    Value q = untranspose(qk.getLhs(), kToHeads);
    Value k = untranspose(qk.getRhs(), kToHeadsT);
    auto maskType = mask ? dyn_cast<RankedTensorType>(mask.getType()) : nullptr;
    if (!q || !k || !sameHeads(q, k, v) || qk.getType() != scoresType ||
        (mask && (!maskType || !maskType.getElementType().isF32() ||
                  maskType.getRank() > 4)))
      return rewriter.notifyMatchFailure(pv, "q/k not per-head transposes");
    // The result in [B, S, H, Dv]; the transpose back, if that is the only
    // reader, is replaced, else the per-head layout is made again.
    auto pvType = cast<RankedTensorType>(pv.getType());
    SmallVector<int64_t> shape = {pvType.getDimSize(0), pvType.getDimSize(2),
                                  pvType.getDimSize(1), pvType.getDimSize(3)};
    auto outType = RankedTensorType::get(shape, pvType.getElementType());
    rewriter.setInsertionPoint(pv);
    auto attention = AttentionOp::create(
        rewriter,
        rewriter.getFusedLoc({qk.getLoc(), softmax.getLoc(), pv.getLoc()}),
        outType, q, k, v, mask, rewriter.getF64FloatAttr(scale));
    Operation *user = pv->hasOneUse() ? *pv->getUsers().begin() : nullptr;
    if (auto back = dyn_cast_or_null<TransposeOp>(user);
        back && back.getPerm() == ArrayRef<int64_t>(kToHeads) &&
        back.getType() == outType) {
      rewriter.replaceOp(back, attention.getResult());
      rewriter.eraseOp(pv);
    } else {
      rewriter.replaceOpWithNewOp<TransposeOp>(
          pv, pvType, attention.getResult(),
          rewriter.getDenseI64ArrayAttr(kToHeads));
    }
    return success();
  }
};

struct FuseAttentionPass
    : public ingot::impl::FuseAttentionBase<FuseAttentionPass> {
  using FuseAttentionBase::FuseAttentionBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttentionChain>(&getContext());
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
