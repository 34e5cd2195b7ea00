//===- FuseConvActivation.cpp - relu and silu into conv -------------------===//
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

namespace ingot {
#define GEN_PASS_DEF_FUSECONVACTIVATION
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// `conv` rebuilt with `activation`, replacing `at`'s result; the conv and
/// what else the caller lists go.
void rebuildWithActivation(PatternRewriter &rewriter, ConvOp conv,
                           Operation *at, StringRef activation) {
  rewriter.setInsertionPoint(at);
  auto fused = cast<ConvOp>(rewriter.clone(*conv.getOperation()));
  fused->setLoc(rewriter.getFusedLoc({conv.getLoc(), at->getLoc()}));
  fused.setActivationAttr(rewriter.getStringAttr(activation));
  rewriter.replaceOp(at, fused.getResult());
}

/// A conv without an activation yet whose result has `uses` readers.
ConvOp convWithUses(Value v, int64_t uses) {
  auto conv = v.getDefiningOp<ConvOp>();
  if (!conv || conv.getActivation() ||
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
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
