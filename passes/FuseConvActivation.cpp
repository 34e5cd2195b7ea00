//===- FuseConvActivation.cpp - activations and clips into conv -----------===//
//
// A convolution's activation is one more pass over its whole output, often
// the largest tensor of a CNN layer; inside the conv kernel it runs on each
// block of output positions while the block is in cache. The conv must
// have no other reader, so nothing sees the value before the activation.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace ingot {
#define GEN_PASS_DEF_FUSECONVACTIVATION
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// A copy of `conv` placed at `at`, with both their locations; the caller
/// sets what it fuses, then replaces `at` with it.
ConvOp cloneConvAt(PatternRewriter &rewriter, ConvOp conv, Operation *at) {
  rewriter.setInsertionPoint(at);
  auto fused = cast<ConvOp>(rewriter.clone(*conv.getOperation()));
  fused->setLoc(rewriter.getFusedLoc({conv.getLoc(), at->getLoc()}));
  return fused;
}

/// `conv` rebuilt with `activation` (and leaky_relu's `alpha`), replacing
/// `at`'s result; the conv and what else the caller lists go.
void rebuildWithActivation(PatternRewriter &rewriter, ConvOp conv,
                           Operation *at, StringRef activation,
                           FloatAttr alpha = {}) {
  ConvOp fused = cloneConvAt(rewriter, conv, at);
  fused.setActivationAttr(rewriter.getStringAttr(activation));
  if (alpha)
    fused.setActivationAlphaAttr(alpha);
  rewriter.replaceOp(at, fused.getResult());
}

/// A conv without an activation (or residual) yet whose result has `uses`
/// readers: an activation follows a residual add only as a separate op.
ConvOp convWithUses(Value v, int64_t uses) {
  auto conv = v.getDefiningOp<ConvOp>();
  if (!conv || conv.getActivation() || conv.getResidual() ||
      std::distance(v.use_begin(), v.use_end()) != uses)
    return nullptr;
  return conv;
}

/// relu(conv(x)) -> conv {activation = "relu"}.
struct FuseRelu : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReluOp relu,
                                PatternRewriter &rewriter) const override {
    ConvOp conv = convWithUses(relu.getInput(), 1);
    if (!conv || relu.getType() != conv.getType())
      return rewriter.notifyMatchFailure(relu, "operand is no sole conv");
    rebuildWithActivation(rewriter, conv, relu, "relu");
    rewriter.eraseOp(conv);
    return success();
  }
};

/// gelu(conv(x)) -> conv {activation = "gelu" or "gelu_tanh"}: linear's
/// function, the gelu kernel's own.
struct FuseGelu : OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GeluOp gelu,
                                PatternRewriter &rewriter) const override {
    ConvOp conv = convWithUses(gelu.getInput(), 1);
    const StringRef form = gelu.getApproximate();
    if (!conv || gelu.getType() != conv.getType() ||
        (form != "none" && form != "tanh"))
      return rewriter.notifyMatchFailure(gelu, "operand is no sole conv");
    rebuildWithActivation(rewriter, conv, gelu,
                          form == "tanh" ? "gelu_tanh" : "gelu");
    rewriter.eraseOp(conv);
    return success();
  }
};

/// mul(y, sigmoid(y)) with y a conv read by nothing else -> silu.
struct FuseSilu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [y, s] : {std::pair{mul.getLhs(), mul.getRhs()},
                        std::pair{mul.getRhs(), mul.getLhs()}}) {
      auto sig = s.getDefiningOp<SigmoidOp>();
      ConvOp conv = convWithUses(y, 2);
      if (!sig || !conv || sig.getInput() != y || !sig->hasOneUse() ||
          mul.getType() != conv.getType())
        continue;
      rebuildWithActivation(rewriter, conv, mul, "silu");
      rewriter.eraseOp(sig);
      rewriter.eraseOp(conv);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not conv * sigmoid(conv)");
  }
};

/// The other operand of a commutative `op` one of whose operands is `v`,
/// or null.
template <typename OpTy> Value otherOperand(OpTy op, Value v) {
  if (op.getLhs() == v)
    return op.getRhs();
  return op.getRhs() == v ? op.getLhs() : Value();
}

/// The ops of min(max(add(y, 3), 0), 6) computing `clip`, each read once.
struct ClipChain {
  Operation *min, *max, *add;
};

/// max and min take their operands in either order: x + 3 is never -0,
/// and NaN wins either way round, so the order cannot change a bit.
std::optional<ClipChain> matchClip(Value clip, Value y) {
  auto min = clip.getDefiningOp<BinaryMathOp>();
  if (!min || min.getKind() != "min" || !min->hasOneUse())
    return std::nullopt;
  for (Value lower : {min.getLhs(), min.getRhs()}) {
    auto max = lower.getDefiningOp<BinaryMathOp>();
    if (!ingot::isScalarConstant(otherOperand(min, lower), 6.0) || !max ||
        max.getKind() != "max" || !max->hasOneUse())
      continue;
    for (Value shifted : {max.getLhs(), max.getRhs()}) {
      auto add = shifted.getDefiningOp<AddOp>();
      if (ingot::isScalarConstant(otherOperand(max, shifted), 0.0) && add &&
          add->hasOneUse() &&
          ingot::isScalarConstant(otherOperand(add, y), 3.0))
        return ClipChain{min, max, add};
    }
  }
  return std::nullopt;
}

/// div(mul(y, min(max(add(y, 3), 0), 6)), 6) with y a conv read only by
/// the add and the mul: HardSwish as PaddleOCR's exports write it after
/// the convs of its PP-LCNet backbones. The kernel computes these
/// operations in this order, so the bits are those of the separate ops.
struct FuseHardSwish : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    auto mul = div.getLhs().getDefiningOp<MulOp>();
    if (!mul || !mul->hasOneUse() ||
        !ingot::isScalarConstant(div.getRhs(), 6.0))
      return rewriter.notifyMatchFailure(div, "not a product divided by 6");
    for (Value y : {mul.getLhs(), mul.getRhs()}) {
      ConvOp conv = convWithUses(y, 2);
      if (!conv || div.getType() != conv.getType())
        continue;
      std::optional<ClipChain> clip = matchClip(otherOperand(mul, y), y);
      if (!clip)
        continue;
      rebuildWithActivation(rewriter, conv, div, "hard_swish");
      for (Operation *op : {mul.getOperation(), clip->min, clip->max, clip->add,
                            conv.getOperation()})
        rewriter.eraseOp(op);
      return success();
    }
    return rewriter.notifyMatchFailure(div, "not hard_swish of a conv");
  }
};

/// leaky_relu(conv(x)) -> conv {activation = "leaky_relu",
/// activation_alpha}: the unary kernel's x < 0 ? alpha·x : x.
struct FuseLeakyRelu : OpRewritePattern<UnaryMathOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(UnaryMathOp op,
                                PatternRewriter &rewriter) const override {
    ConvOp conv = convWithUses(op.getInput(), 1);
    if (op.getKind() != "leaky_relu" || !op.getAlpha() || !conv ||
        op.getType() != conv.getType())
      return rewriter.notifyMatchFailure(op, "not leaky_relu of a sole conv");
    rebuildWithActivation(rewriter, conv, op, "leaky_relu", op.getAlphaAttr());
    rewriter.eraseOp(conv);
    return success();
  }
};

/// max(conv(x), lo) -> conv {clip_min = lo}, then min(conv, hi) ->
/// conv {clip_max = hi}: Clip as the importer writes it, or TF's clamp
/// after a leaky_relu (openWakeWord's embedding CNN). The conv may have an
/// activation, which runs first as it did; a max after a min is left
/// alone, as the kernel clamps in Clip's order.
struct FuseClip : OpRewritePattern<BinaryMathOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BinaryMathOp op,
                                PatternRewriter &rewriter) const override {
    const bool isMax = op.getKind() == "max";
    if (!isMax && op.getKind() != "min")
      return rewriter.notifyMatchFailure(op, "neither max nor min");
    for (auto [y, bound] : {std::pair{op.getLhs(), op.getRhs()},
                            std::pair{op.getRhs(), op.getLhs()}}) {
      auto conv = y.getDefiningOp<ConvOp>();
      std::optional<double> value = ingot::scalarConstant(bound);
      // The kernel keeps the tensor's value on a tie, as max(x, c) does;
      // max(c, x) keeps c, which differs only for -0 against +0.
      const bool tensorFirst = y == op.getLhs();
      if (!conv || conv.getResidual() || !y.hasOneUse() || !value ||
          std::isnan(*value) || (!tensorFirst && *value == 0.0) ||
          op.getType() != conv.getType() || conv.getClipMax() ||
          (isMax && conv.getClipMin()))
        continue;
      ConvOp fused = cloneConvAt(rewriter, conv, op);
      FloatAttr attr = rewriter.getF32FloatAttr(float(*value));
      if (isMax)
        fused.setClipMinAttr(attr);
      else
        fused.setClipMaxAttr(attr);
      rewriter.replaceOp(op, fused.getResult());
      rewriter.eraseOp(conv);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a sole conv and a constant");
  }
};

/// add(conv, r) or add(r, conv), r of the result's type, with the conv
/// read only there -> conv {residual = r}: added after the conv's bias,
/// activation and clips (YOLOv8's bottlenecks add their input to a SiLU
/// conv; ResNet's relu(conv + x) keeps its relu as a separate op).
struct FuseResidual : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [y, r] : {std::pair{add.getLhs(), add.getRhs()},
                        std::pair{add.getRhs(), add.getLhs()}}) {
      auto conv = y.getDefiningOp<ConvOp>();
      if (!conv || conv.getResidual() || !y.hasOneUse() || y == r ||
          add.getType() != conv.getType() || r.getType() != conv.getType())
        continue;
      ConvOp fused = cloneConvAt(rewriter, conv, add);
      fused.getResidualMutable().assign(r);
      rewriter.replaceOp(add, fused.getResult());
      rewriter.eraseOp(conv);
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no sole conv of the add's type");
  }
};

struct FuseConvActivationPass
    : public ingot::impl::FuseConvActivationBase<FuseConvActivationPass> {
  using FuseConvActivationBase::FuseConvActivationBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    if (relu)
      patterns.add<FuseRelu>(ctx);
    if (silu)
      patterns.add<FuseSilu>(ctx);
    if (hardSwish)
      patterns.add<FuseHardSwish>(ctx);
    if (gelu)
      patterns.add<FuseGelu>(ctx);
    if (leakyRelu)
      patterns.add<FuseLeakyRelu>(ctx);
    if (clip)
      patterns.add<FuseClip>(ctx);
    if (residual)
      patterns.add<FuseResidual>(ctx);
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
