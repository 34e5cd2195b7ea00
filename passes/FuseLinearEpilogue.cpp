//===- FuseLinearEpilogue.cpp - Activations and residuals into linear -----===//
//
// An activation or residual add after a linear is another full pass over
// its output; inside the linear kernel it is applied to each output tile
// while the tile is still in cache. Matmuls against a 2-D weight (what
// ONNX exporters write for linear layers) are raised to `linear` first so
// they get the same epilogues.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_FUSELINEAREPILOGUE
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// A linear whose only user is the op being fused and that has no
/// epilogue of the kind being added yet.
LinearOp soleLinear(Value v, bool needNoActivation) {
  auto l = v.getDefiningOp<LinearOp>();
  if (!l || !l->hasOneUse() || l.getResidual() ||
      (needNoActivation && l.getActivation() != "none"))
    return nullptr;
  return l;
}

/// Rebuilds `l` before `at` with `bias`, `residual` and `activation`,
/// replacing `at`'s result; `l` goes.
void rebuild(PatternRewriter &rewriter, LinearOp l, Operation *at, Value bias,
             Value residual, StringAttr activation) {
  rewriter.setInsertionPoint(at);
  auto fused = LinearOp::create(
      rewriter, rewriter.getFusedLoc({l.getLoc(), at->getLoc()}), l.getType(),
      l.getInput(), l.getWeight(), bias, residual, l.getWLayoutAttr(),
      activation);
  rewriter.replaceOp(at, fused.getResult());
  rewriter.eraseOp(l);
}

/// `v` as a weight the linear kernel reads: a 2-D f32/f16/bf16 param.
ParamOp linearWeight(Value v) {
  auto w = v.getDefiningOp<ParamOp>();
  if (!w || w.getType().getRank() != 2)
    return nullptr;
  Type t = w.getType().getElementType();
  return t.isF32() || t.isF16() || t.isBF16() ? w : nullptr;
}

/// matmul(x, W) with W a 2-D weight param -> linear kn.
struct RaiseMatMul : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp m,
                                PatternRewriter &rewriter) const override {
    ParamOp w = linearWeight(m.getRhs());
    auto x = cast<RankedTensorType>(m.getLhs().getType());
    if (!w || x.getRank() < 2 || !x.getElementType().isF32() ||
        m.getType() == nullptr)
      return rewriter.notifyMatchFailure(
          m, "rhs is not a 2-D f32/f16/bf16 weight param");
    rewriter.replaceOpWithNewOp<LinearOp>(
        m, m.getType(), m.getLhs(), w, Value(), Value(),
        rewriter.getStringAttr("kn"), rewriter.getStringAttr("none"));
    return success();
  }
};

/// gemm(x, W, b) with W a 2-D weight param and b absent or a 1-D [N]
/// param, no scaling and no transposed x -> linear ("nk" when transB).
struct RaiseGemm : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp g,
                                PatternRewriter &rewriter) const override {
    ParamOp w = linearWeight(g.getB());
    auto x = cast<RankedTensorType>(g.getA().getType());
    auto bias = g.getC() ? g.getC().getDefiningOp<ParamOp>() : nullptr;
    if (!w || !x.getElementType().isF32() || g.getTransA() != 0 ||
        g.getAlpha().convertToDouble() != 1.0 ||
        (g.getC() && (!bias || bias.getType().getRank() != 1 ||
                      g.getBeta().convertToDouble() != 1.0)))
      return rewriter.notifyMatchFailure(g, "not x·W (+ b) with weights");
    const int64_t n = w.getType().getDimSize(g.getTransB() ? 0 : 1);
    if (bias && bias.getType().getDimSize(0) != n)
      return rewriter.notifyMatchFailure(g, "bias does not fit");
    rewriter.replaceOpWithNewOp<LinearOp>(
        g, g.getType(), g.getA(), w, bias ? Value(bias) : Value(), Value(),
        rewriter.getStringAttr(g.getTransB() ? "nk" : "kn"),
        rewriter.getStringAttr("none"));
    return success();
  }
};

/// A weight param holding N values along the last axis only ([N], or
/// [1, 1, N] as jax2tf's Dense writes its bias), as a 1-D [N] value.
Value biasVector(PatternRewriter &rewriter, Value v, int64_t n,
                 Operation *before) {
  auto param = v.getDefiningOp<ParamOp>();
  if (!param)
    return Value();
  ArrayRef<int64_t> dims = param.getType().getShape();
  if (dims.empty() || dims.back() != n ||
      llvm::any_of(dims.drop_back(), [](int64_t d) { return d != 1; }))
    return Value();
  if (dims.size() == 1)
    return param;
  rewriter.setInsertionPoint(before);
  return ingot::reshapeTo(rewriter, param.getLoc(), param, {n});
}

/// add(linear(x), bias) with a weight param of N values along the last
/// axis -> linear with bias.
struct FuseBias : OpRewritePattern<AddOp> {
  // Ahead of FuseResidual: an add that is a bias is not a residual.
  FuseBias(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [lhs, rhs] : {std::pair{add.getLhs(), add.getRhs()},
                            std::pair{add.getRhs(), add.getLhs()}}) {
      LinearOp l = soleLinear(lhs, /*needNoActivation=*/true);
      auto yt = l ? cast<RankedTensorType>(l.getType()) : nullptr;
      auto bt = dyn_cast<RankedTensorType>(rhs.getType());
      if (!l || l.getBias() || add.getType() != l.getType() || !bt ||
          bt.getRank() > yt.getRank())
        continue;
      Value bias = biasVector(rewriter, rhs, yt.getShape().back(), add);
      if (!bias)
        continue;
      rebuild(rewriter, l, add, bias, Value(), l.getActivationAttr());
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no linear + bias param");
  }
};

/// add(linear(x), r) with r of the result's type -> linear with residual.
struct FuseResidual : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [lhs, rhs] : {std::pair{add.getLhs(), add.getRhs()},
                            std::pair{add.getRhs(), add.getLhs()}}) {
      LinearOp l = soleLinear(lhs, /*needNoActivation=*/false);
      if (!l || rhs.getType() != add.getType() || l.getType() != add.getType())
        continue;
      rebuild(rewriter, l, add, l.getBias(), rhs, l.getActivationAttr());
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no linear + same-shape tensor");
  }
};

/// relu/gelu(linear(x)) -> linear with that activation.
template <typename ActivationOp>
struct FuseActivation : OpRewritePattern<ActivationOp> {
  using OpRewritePattern<ActivationOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ActivationOp op,
                                PatternRewriter &rewriter) const override {
    LinearOp l = soleLinear(op->getOperand(0), /*needNoActivation=*/true);
    if (!l || op->getResult(0).getType() != l.getType())
      return rewriter.notifyMatchFailure(op, "operand is no sole linear");
    rebuild(rewriter, l, op, l.getBias(), Value(),
            rewriter.getStringAttr(activationOf(op)));
    return success();
  }

  /// The linear activation `op` computes from its operand.
  static StringRef activationOf(ActivationOp op) {
    if constexpr (std::is_same_v<ActivationOp, GeluOp>)
      return op.getApproximate() == "tanh" ? "gelu_tanh" : "gelu";
    else
      return "relu";
  }
};

/// mul(y, sigmoid(y)) with y a linear read by nothing else: silu.
struct FuseSilu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [a, s] : {std::pair{mul.getLhs(), mul.getRhs()},
                        std::pair{mul.getRhs(), mul.getLhs()}}) {
      auto sig = s.getDefiningOp<SigmoidOp>();
      auto l = a.getDefiningOp<LinearOp>();
      if (!sig || !l || sig.getInput() != a || !sig->hasOneUse() ||
          l.getResidual() || l.getActivation() != "none" ||
          mul.getType() != l.getType() ||
          std::distance(a.use_begin(), a.use_end()) != 2)
        continue;
      rewriter.setInsertionPoint(mul);
      auto fused = LinearOp::create(
          rewriter, rewriter.getFusedLoc({l.getLoc(), mul.getLoc()}),
          l.getType(), l.getInput(), l.getWeight(), l.getBias(), Value(),
          l.getWLayoutAttr(), rewriter.getStringAttr("silu"));
      rewriter.replaceOp(mul, fused.getResult());
      rewriter.eraseOp(sig);
      rewriter.eraseOp(l);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not linear * sigmoid(linear)");
  }
};

struct FuseLinearEpiloguePass
    : public ingot::impl::FuseLinearEpilogueBase<FuseLinearEpiloguePass> {
  using FuseLinearEpilogueBase::FuseLinearEpilogueBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<RaiseMatMul, RaiseGemm, FuseBias>(ctx);
    if (activation)
      patterns.add<FuseActivation<ReluOp>, FuseActivation<GeluOp>, FuseSilu>(
          ctx);
    if (residual)
      patterns.add<FuseResidual>(ctx);
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
