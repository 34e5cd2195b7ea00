//===- SqueezeConv.cpp - a conv's squeezed unit dims dropped --------------===//
//
// TensorFlow has no 1-D conv: jax2tf and tf2onnx write one as a 2-D conv
// over [N, C, L, 1] with a [k, 1] kernel, then squeeze the unit dim. The
// squeeze sits between the conv and its bias add and activation, so
// neither folds nor fuses into it. Where every squeezed dim is one the
// conv neither reads nor pads (input 1, kernel 1, no pads), the conv runs
// on the squeezed input and weight instead and its result is the
// squeezed one: the same sums, one dim fewer.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_SQUEEZECONV
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// `v` of static dims with `axes` removed.
RankedTensorType withoutAxes(Value v, ArrayRef<int64_t> axes) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      dims.push_back(t.getDimSize(i));
  return RankedTensorType::get(dims, t.getElementType());
}

/// A per-spatial-dim attribute without the entries of spatial axes
/// `spatial` (0-based, of `rank`); pads hold begins then ends, so entry i
/// is of axis i mod rank either way.
SmallVector<int64_t> dropSpatial(ArrayRef<int64_t> values,
                                 ArrayRef<int64_t> spatial, int64_t rank) {
  SmallVector<int64_t> out;
  for (size_t i = 0; i < values.size(); ++i)
    if (!llvm::is_contained(spatial, int64_t(i) % rank))
      out.push_back(values[i]);
  return out;
}

struct SqueezeUnitDims : OpRewritePattern<SqueezeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SqueezeOp squeeze,
                                PatternRewriter &rw) const override {
    auto conv = squeeze.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse() || conv.getResidual())
      return rw.notifyMatchFailure(squeeze,
                                   "not the sole reader of a conv, or one "
                                   "with a residual of the unsqueezed shape");
    auto xt = dyn_cast<RankedTensorType>(conv.getInput().getType());
    auto wt = dyn_cast<RankedTensorType>(conv.getWeight().getType());
    if (!xt || !wt || xt.getRank() != wt.getRank() ||
        (conv.getAutoPad() != "NOTSET" && conv.getAutoPad() != "VALID"))
      return rw.notifyMatchFailure(squeeze, "conv of unknown rank or padding");
    const int64_t nsp = xt.getRank() - 2;
    ArrayRef<int64_t> pads = conv.getPads();
    SmallVector<int64_t> spatial; // squeezed spatial axes, 0-based
    for (int64_t a : squeeze.getAxes()) {
      const int64_t s = (a < 0 ? a + xt.getRank() : a) - 2;
      if (s < 0 || xt.getDimSize(s + 2) != 1 || wt.getDimSize(s + 2) != 1 ||
          (int64_t(pads.size()) == 2 * nsp &&
           (pads[s] != 0 || pads[s + nsp] != 0)))
        return rw.notifyMatchFailure(squeeze, "squeezes a dim the conv uses");
      spatial.push_back(s);
    }
    if (spatial.empty() || int64_t(spatial.size()) >= nsp)
      return rw.notifyMatchFailure(squeeze, "no spatial dim would be left");
    SmallVector<int64_t> axes;
    for (int64_t s : spatial)
      axes.push_back(s + 2);
    const Location loc = conv.getLoc();
    auto axesAttr = rw.getDenseI64ArrayAttr(axes);
    Value x = SqueezeOp::create(rw, loc, withoutAxes(conv.getInput(), axes),
                                conv.getInput(), axesAttr);
    Value w = SqueezeOp::create(rw, loc, withoutAxes(conv.getWeight(), axes),
                                conv.getWeight(), axesAttr);
    auto squeezed = cast<ConvOp>(rw.clone(*conv.getOperation()));
    squeezed->setOperand(0, x);
    squeezed->setOperand(1, w);
    squeezed->getResult(0).setType(squeeze.getType());
    squeezed.setStrides(dropSpatial(conv.getStrides(), spatial, nsp));
    squeezed.setDilations(dropSpatial(conv.getDilations(), spatial, nsp));
    squeezed.setPads(dropSpatial(pads, spatial, nsp));
    if (auto k = conv.getKernelShape())
      squeezed.setKernelShape(dropSpatial(*k, spatial, nsp));
    rw.replaceOp(squeeze, squeezed.getResult());
    rw.eraseOp(conv);
    return success();
  }
};

struct SqueezeConvPass : public ingot::impl::SqueezeConvBase<SqueezeConvPass> {
  using SqueezeConvBase::SqueezeConvBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<SqueezeUnitDims>(ctx);
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
