//===- FoldConvInputAffine.cpp - x·s + b into the conv that reads it ------===//
//
// PaddleOCR's PP-LCNetV3 ends every activation with a learnable scalar
// affine, y = act(…)·s + b, then convolves y. Without padding the conv is
// linear in its input, so conv(W, x·s + b) = conv(W·s, x) + b·ΣW[m] per
// output channel: the affine moves into the weights and bias, computed
// once from weights alone (constant steps), instead of one more pass over
// the activation. A padded conv pads y with zeros, not with b, so it is
// left alone.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_FOLDCONVINPUTAFFINE
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// A one-element f32 constant.
bool isScalarConstant(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32() && ingot::scalarConstant(v);
}

/// `op` (a mul or add read once) of `x` and a scalar constant: sets the
/// pair.
template <typename OpTy>
bool splitScalar(Operation *op, Value *x, Value *scalar) {
  auto bin = dyn_cast_or_null<OpTy>(op);
  if (!bin || !bin->hasOneUse())
    return false;
  for (auto [v, c] : {std::pair{bin.getLhs(), bin.getRhs()},
                      std::pair{bin.getRhs(), bin.getLhs()}})
    if (v.getType() == bin.getType() && isScalarConstant(c)) {
      *x = v, *scalar = c;
      return true;
    }
  return false;
}

/// Every pad of `conv` is zero (explicitly, or auto_pad VALID).
bool unpadded(ConvOp conv) {
  StringRef autoPad = conv.getAutoPad();
  if (autoPad == "VALID")
    return true;
  return autoPad == "NOTSET" &&
         llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; });
}

struct FoldInputAffine : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rw) const override {
    // x·s + b, x·s or x + b, the scalars constants.
    Value x = conv.getInput(), scale, shift;
    Operation *add = x.getDefiningOp();
    if (!splitScalar<AddOp>(add, &x, &shift))
      add = nullptr;
    Operation *mul = x.getDefiningOp();
    if (!splitScalar<MulOp>(mul, &x, &scale))
      mul = nullptr;
    auto wt = cast<RankedTensorType>(conv.getWeight().getType());
    if ((!add && !mul) || !unpadded(conv) || !wt.hasStaticShape() ||
        !wt.getElementType().isF32() || !ingot::weightOnly(conv.getWeight()) ||
        (conv.getBias() && !ingot::weightOnly(conv.getBias())))
      return rw.notifyMatchFailure(conv, "input is no scalar affine");
    rewrite(rw, conv, x, scale, shift);
    for (Operation *op : {add, mul})
      if (op)
        rw.eraseOp(op);
    return success();
  }

  void rewrite(PatternRewriter &rw, ConvOp conv, Value x, Value scale,
               Value shift) const {
    rw.setInsertionPoint(conv);
    const Location loc = conv.getLoc();
    auto wt = cast<RankedTensorType>(conv.getWeight().getType());
    const int64_t m = wt.getDimSize(0), rank = wt.getRank();
    auto vecType = RankedTensorType::get({m}, rw.getF32Type());
    Value weight = conv.getWeight(), bias = conv.getBias();
    if (shift) {
      // b · Σ W[m, …] over the original weights.
      SmallVector<int64_t> axes;
      for (int64_t d = 1; d < rank; ++d)
        axes.push_back(d);
      Value sum = ReduceOp::create(
          rw, loc, vecType, weight, Value(), rw.getStringAttr("sum"),
          rw.getDenseI64ArrayAttr(axes), rw.getI64IntegerAttr(0), nullptr);
      Value moved = MulOp::create(rw, loc, vecType, sum,
                                  ingot::reshapeTo(rw, loc, shift, {1}));
      bias = bias ? AddOp::create(rw, loc, vecType, bias, moved).getResult()
                  : moved;
    }
    if (scale)
      weight = MulOp::create(
          rw, loc, wt, weight,
          ingot::reshapeTo(rw, loc, scale, SmallVector<int64_t>(rank, 1)));
    auto folded = cast<ConvOp>(rw.clone(*conv.getOperation()));
    folded->setOperand(0, x);
    folded->setOperand(1, weight);
    if (bias) // the bias segment (operandSegmentSizes follows)
      folded.getBiasMutable().assign(bias);
    rw.replaceOp(conv, folded.getResult());
  }
};

struct FoldConvInputAffinePass
    : public ingot::impl::FoldConvInputAffineBase<FoldConvInputAffinePass> {
  using FoldConvInputAffineBase::FoldConvInputAffineBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FoldInputAffine>(ctx);
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
