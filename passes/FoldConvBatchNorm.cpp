//===- FoldConvBatchNorm.cpp - per-channel affine ops into the conv -------===//
//
// BatchNormalization after a conv (PaddlePaddle's exports keep it; the ONNX
// importer writes it as sub mean, mul scale/sqrt(var+eps), add B) is an
// affine map per output channel, so it folds into the conv's weights and
// bias: mul by f scales W's row m and the bias, add/sub of c moves the
// bias. The new weight and bias are ops on weights alone, which the
// runtime computes once, on the first run, and keeps (constant steps), so
// every later run convolves with the folded weights and the BN costs
// nothing; without the fold it was a fused_elementwise pass over the
// conv's whole output, with three per-channel gathers per tile.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_FOLDCONVBATCHNORM
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// `c` holds one f32 value, which broadcasts to every element of `conv`'s
/// result (PaddleOCR's learnable affine: a scale and a bias per layer).
bool isScalar(Value c, ConvOp conv) {
  auto ct = dyn_cast<RankedTensorType>(c.getType());
  auto yt = cast<RankedTensorType>(conv.getType());
  return ct && ct.hasStaticShape() && ct.getElementType().isF32() &&
         ct.getNumElements() == 1 && ct.getRank() <= yt.getRank();
}

/// `c` holds one value per output channel of `conv`'s result, laid out to
/// broadcast along the channel axis only ([M, 1, 1], [1, M, 1, 1], ...),
/// or one value for all of them.
bool perChannel(Value c, ConvOp conv) {
  auto ct = dyn_cast<RankedTensorType>(c.getType());
  auto yt = cast<RankedTensorType>(conv.getType());
  auto wt = cast<RankedTensorType>(conv.getWeight().getType());
  if (!ct || !ct.hasStaticShape() || !ct.getElementType().isF32() ||
      wt.isDynamicDim(0) || ct.getRank() > yt.getRank())
    return false;
  if (isScalar(c, conv))
    return true;
  const int64_t channel = 1 - (yt.getRank() - ct.getRank());
  if (channel < 0 || ct.getDimSize(channel) != wt.getDimSize(0))
    return false;
  for (int64_t i = 0; i < ct.getRank(); ++i)
    if (i != channel && ct.getDimSize(i) != 1)
      return false;
  return true;
}

/// conv ∘ op, with op one of add/sub/mul by per-channel weights `c`.
template <typename OpTy> struct FoldIntoConv : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rw) const override {
    constexpr bool kSub = std::is_same_v<OpTy, SubOp>;
    // Sub folds only as conv − c; add and mul commute.
    for (bool convOnLeft : {true, false}) {
      if (kSub && !convOnLeft)
        break;
      Value y = convOnLeft ? op.getLhs() : op.getRhs();
      Value c = convOnLeft ? op.getRhs() : op.getLhs();
      auto conv = y.getDefiningOp<ConvOp>();
      if (!conv || conv.getActivation() || conv.getResidual() ||
          !y.hasOneUse() || op.getType() != conv.getType() ||
          !perChannel(c, conv) || !ingot::weightOnly(c) ||
          !ingot::weightOnly(conv.getWeight()) ||
          (conv.getBias() && !ingot::weightOnly(conv.getBias())))
        continue;
      fold(rw, op, conv, c);
      return success();
    }
    return rw.notifyMatchFailure(op, "not conv and per-channel weights");
  }

  void fold(PatternRewriter &rw, OpTy op, ConvOp conv, Value c) const {
    rw.setInsertionPoint(op);
    const Location loc = op.getLoc();
    auto wt = cast<RankedTensorType>(conv.getWeight().getType());
    const int64_t m = wt.getDimSize(0);
    auto vecType = RankedTensorType::get({m}, rw.getF32Type());
    Value flat = ingot::reshapeTo(rw, loc, c, {isScalar(c, conv) ? 1 : m});
    if (isScalar(c, conv)) // one value per channel: 1·c keeps c's bits, -0 too
      flat = MulOp::create(
          rw, loc, vecType,
          ConstantOp::create(rw, loc, vecType,
                             DenseElementsAttr::get(vecType, 1.0f)),
          flat);
    Value weight = conv.getWeight(), bias = conv.getBias();
    if constexpr (std::is_same_v<OpTy, MulOp>) {
      SmallVector<int64_t> rows(wt.getRank(), 1);
      rows[0] = m;
      weight = MulOp::create(rw, loc, wt, weight,
                             ingot::reshapeTo(rw, loc, flat, rows));
      if (bias)
        bias = MulOp::create(rw, loc, vecType, bias, flat);
    } else if constexpr (std::is_same_v<OpTy, AddOp>) {
      bias =
          bias ? AddOp::create(rw, loc, vecType, bias, flat).getResult() : flat;
    } else {
      bias = bias ? SubOp::create(rw, loc, vecType, bias, flat).getResult()
                  : NegOp::create(rw, loc, vecType, flat).getResult();
    }
    auto folded = cast<ConvOp>(rw.clone(*conv.getOperation()));
    folded->setLoc(rw.getFusedLoc({conv.getLoc(), loc}));
    folded->setOperand(1, weight);
    // The bias segment (operandSegmentSizes follows); a mul of a conv
    // without bias leaves it without one.
    if (bias)
      folded.getBiasMutable().assign(bias);
    rw.replaceOp(op, folded.getResult());
    rw.eraseOp(conv);
  }
};

struct FoldConvBatchNormPass
    : public ingot::impl::FoldConvBatchNormBase<FoldConvBatchNormPass> {
  using FoldConvBatchNormBase::FoldConvBatchNormBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FoldIntoConv<SubOp>, FoldIntoConv<MulOp>>(ctx);
    if (bias)
      patterns.add<FoldIntoConv<AddOp>>(ctx);
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
