//===- FuseMatMulIntegerEpilogue.cpp - dequantise inside matmul_integer ---===//
//
// quantize_dynamic writes MatMulInteger -> Cast(f32) -> Mul(scale) ->
// Add(bias) for every MatMul of the float model; as separate kernels the
// int32 product is written out and read back by a fused elementwise
// kernel (a fifth of all-MiniLM-L6-v2's int8 run, 2026-12-07). The match
// starts at the cast of a matmul_integer without an epilogue and takes
// each next op while it is the only reader of the one before.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace ingot {
#define GEN_PASS_DEF_FUSEMATMULINTEGEREPILOGUE
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {

/// matmul_integer -> cast -> mul [-> add] [-> gelu | relu] as one op.
struct FuseDequantizeEpilogue : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp toFloat,
                                PatternRewriter &rewriter) const override {
    auto mm = toFloat.getInput().getDefiningOp<MatMulIntegerOp>();
    auto type = dyn_cast<RankedTensorType>(toFloat.getType());
    if (!mm || mm.getScale() || !mm->hasOneUse() || !type ||
        !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(toFloat, "not a cast of a product");
    const int64_t n =
        cast<RankedTensorType>(mm.getRhs().getType()).getDimSize(1);
    auto mul = ingot::soleReader<MulOp>(toFloat);
    Value scale =
        mul && mul.getType() == type
            ? ingot::f32ColumnOperand(mul, toFloat, n, /*scalarToo=*/true)
            : nullptr;
    if (!scale || ShapedType::isDynamic(n))
      return rewriter.notifyMatchFailure(toFloat, "no column scale follows");
    Operation *last = mul;
    Value bias;
    if (auto add = ingot::soleReader<AddOp>(mul); add && add.getType() == type)
      if ((bias = ingot::f32ColumnOperand(add, mul, n, /*scalarToo=*/false)))
        last = add;
    StringAttr act;
    if (auto g = ingot::soleReader<GeluOp>(last->getResult(0))) {
      act = rewriter.getStringAttr(g.getApproximate() == "tanh" ? "gelu_tanh"
                                                                : "gelu");
      last = g;
    } else if (auto r = ingot::soleReader<ReluOp>(last->getResult(0))) {
      act = rewriter.getStringAttr("relu");
      last = r;
    }
    auto fused = MatMulIntegerOp::create(
        rewriter, last->getLoc(), type, mm.getLhs(), mm.getRhs(),
        mm.getLhsZeroPoint(), mm.getRhsZeroPoint(), scale, bias, act);
    rewriter.replaceOp(last, fused.getResult());
    return success();
  }
};

struct FuseMatMulIntegerEpiloguePass
    : public ingot::impl::FuseMatMulIntegerEpilogueBase<
          FuseMatMulIntegerEpiloguePass> {
  using FuseMatMulIntegerEpilogueBase::FuseMatMulIntegerEpilogueBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseDequantizeEpilogue>(&getContext());
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
