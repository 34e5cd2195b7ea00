//===- RaiseLayerNorm.cpp - layer norm as exporters write it, as one op ---===//
//
// Exports below opset 17 (which has no LayerNormalization) write a last-axis
// layer norm as nine ops:
//   m = reduce_mean(x), d = x - m, v = reduce_mean(d², or d · d),
//   y = d / sqrt(v + eps) · gamma [+ beta]
// (PyTorch's BERT exports, and onnxruntime's quantize_dynamic keeps them).
// As one `ingot.layer_norm` the residual add before it fuses too
// (ingot-fuse-add-norm), and the rows are read twice instead of five
// kernels reading and writing them.
//
// The match starts at the division: its numerator must be x minus the
// mean of x over the last axis (kept), its denominator the square root of
// the mean of that difference squared plus a scalar constant. Every op
// below the division is read only inside the pattern, except x. gamma and
// beta must be [C] for the last dim C, so that the norm's scale and bias
// broadcast exactly as the multiply and add did.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_RAISELAYERNORM
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// reduce_mean(v) over the last axis, kept, of a rank-`rank` tensor.
bool isLastAxisMean(ReduceMeanOp m, Value of, int64_t rank) {
  if (!m)
    return false;
  ArrayRef<int64_t> axes = m.getAxes();
  return m.getInput() == of && m.getKeepdims() == 1 && axes.size() == 1 &&
         (axes[0] == -1 || axes[0] == rank - 1);
}

/// d², written as pow(d, 2) or d · d.
bool isSquareOf(Value v, Value d) {
  if (auto p = ingot::definedForOneReader<PowOp>(v))
    return p.getLhs() == d && ingot::isScalarConstant(p.getRhs(), 2.0);
  auto m = ingot::definedForOneReader<MulOp>(v);
  return m && m.getLhs() == d && m.getRhs() == d;
}

/// For the division n = d / sqrt(mean(d²) + eps), d = x - mean(x): x and
/// eps.
std::optional<std::pair<Value, double>> matchNormalized(DivOp div) {
  auto type = dyn_cast<RankedTensorType>(div.getType());
  if (!type || !type.getElementType().isF32() || type.getRank() < 1 ||
      type.isDynamicDim(type.getRank() - 1))
    return std::nullopt;
  const int64_t rank = type.getRank();
  auto sub = div.getLhs().getDefiningOp<SubOp>();
  if (!sub || sub.getType() != type)
    return std::nullopt;
  Value x = sub.getLhs();
  if (x.getType() != type ||
      !isLastAxisMean(ingot::definedForOneReader<ReduceMeanOp>(sub.getRhs()), x,
                      rank))
    return std::nullopt;
  auto sqrt = ingot::definedForOneReader<SqrtOp>(div.getRhs());
  auto add =
      sqrt ? ingot::definedForOneReader<AddOp>(sqrt.getInput()) : nullptr;
  if (!add)
    return std::nullopt;
  for (auto [var, eps] : {std::pair{add.getLhs(), add.getRhs()},
                          std::pair{add.getRhs(), add.getLhs()}}) {
    std::optional<double> e = ingot::scalarConstant(eps);
    auto mean = ingot::definedForOneReader<ReduceMeanOp>(var);
    if (!e || *e < 0 || !mean || !isSquareOf(mean.getInput(), sub) ||
        !isLastAxisMean(mean, mean.getInput(), rank))
      continue;
    // The difference feeds only its square and the division.
    Operation *square = mean.getInput().getDefiningOp();
    if (llvm::all_of(sub->getUsers(), [&](Operation *u) {
          return u == square || u == div.getOperation();
        }))
      return std::pair{x, *e};
  }
  return std::nullopt;
}

/// The decomposed norm, scaled and maybe shifted -> ingot.layer_norm.
struct RaiseDecomposedLayerNorm : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    std::optional<std::pair<Value, double>> norm = matchNormalized(div);
    if (!norm)
      return rewriter.notifyMatchFailure(div, "not a decomposed layer norm");
    auto type = cast<RankedTensorType>(div.getType());
    const int64_t c = type.getDimSize(type.getRank() - 1);
    auto scaled = ingot::soleReader<MulOp>(div);
    Value gamma =
        scaled && scaled.getType() == type
            ? ingot::f32ColumnOperand(scaled, div, c, /*scalarToo=*/false)
            : nullptr;
    if (!gamma)
      return rewriter.notifyMatchFailure(div, "no [C] scale multiplies it");
    Operation *root = scaled;
    Value beta;
    if (auto shift = ingot::soleReader<AddOp>(scaled);
        shift && shift.getType() == type)
      if ((beta = ingot::f32ColumnOperand(shift, scaled, c,
                                          /*scalarToo=*/false)))
        root = shift;
    auto ln = LayerNormOp::create(
        rewriter, root->getLoc(), type, norm->first, gamma, beta,
        rewriter.getI64IntegerAttr(-1),
        rewriter.getF32FloatAttr(static_cast<float>(norm->second)));
    rewriter.replaceOp(root, ln.getResult());
    return success();
  }
};

struct RaiseLayerNormPass
    : public ingot::impl::RaiseLayerNormBase<RaiseLayerNormPass> {
  using RaiseLayerNormBase::RaiseLayerNormBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseDecomposedLayerNorm>(&getContext());
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
