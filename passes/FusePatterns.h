//===- FusePatterns.h - How the fusion passes run their patterns -*- C++ -*-===//
//
// The greedy driver, configured so that a pattern-based fusion pass changes
// only what its patterns match: no folding, no constant hoisting and no
// region simplification (ingot-canonicalize does those where the pipeline
// wants them), and top-down order so that an op's producers are rewritten
// before the op itself is matched: the first of several norms of one sum
// absorbs the add, and relu(linear) becomes one linear before an add of
// its result is tried as a residual. The driver still erases ops that a
// rewrite left dead (ingot-canonicalize would, next).
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_PASSES_FUSEPATTERNS_H
#define INGOT_PASSES_FUSEPATTERNS_H

#include "dialects/Ingot/IngotDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <optional>

namespace ingot {

/// The value of a one-element float constant, if `v` is one.
inline std::optional<double> scalarConstant(mlir::Value v) {
  mlir::DenseFPElementsAttr attr;
  if (!mlir::matchPattern(v, mlir::m_Constant(&attr)) ||
      attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.getValues<llvm::APFloat>().begin()).convertToDouble();
}

/// Whether `v` is a one-element float constant within `rtol` of `want`
/// (exactly `want` by default); a null `v` is not.
inline bool isScalarConstant(mlir::Value v, double want, double rtol = 0.0) {
  std::optional<double> got = v ? scalarConstant(v) : std::nullopt;
  return got && std::abs(*got - want) <= rtol * std::abs(want);
}

/// `v` as the result of an op of type T that nothing else reads, if it is
/// one: the inside of a pattern, left dead once its root is rewritten.
template <typename T> T definedForOneReader(mlir::Value v) {
  auto op = v.getDefiningOp<T>();
  return op && op->hasOneUse() ? op : nullptr;
}

/// The only op reading `v`, if it is a T.
template <typename T> T soleReader(mlir::Value v) {
  return v.hasOneUse() ? mlir::dyn_cast<T>(*v.getUsers().begin()) : nullptr;
}

/// The operand of the binary `op` other than `known`, if it is an f32
/// vector of `n` values or, when `scalarToo`, one value (static shapes):
/// a per-column scale or bias that broadcasts only along the last axis.
inline mlir::Value f32ColumnOperand(mlir::Operation *op, mlir::Value known,
                                    int64_t n, bool scalarToo) {
  mlir::Value other =
      op->getOperand(0) == known ? op->getOperand(1) : op->getOperand(0);
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(other.getType());
  if (other == known || !t || !t.hasStaticShape() ||
      !t.getElementType().isF32())
    return nullptr;
  const bool column = t.getRank() == 1 && t.getDimSize(0) == n;
  return column || (scalarToo && t.getNumElements() == 1) ? other : nullptr;
}

/// `v` (static) reshaped to `dims`, with a constant shape operand.
inline mlir::Value reshapeTo(mlir::PatternRewriter &rw, mlir::Location loc,
                             mlir::Value v, llvm::ArrayRef<int64_t> dims) {
  auto shapeType =
      mlir::RankedTensorType::get({int64_t(dims.size())}, rw.getI64Type());
  mlir::Value shape = graph::ConstantOp::create(
      rw, loc, shapeType, mlir::DenseElementsAttr::get(shapeType, dims));
  auto type = mlir::RankedTensorType::get(
      dims, mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType());
  return graph::ReshapeOp::create(rw, loc, type, v, shape,
                                  rw.getI64IntegerAttr(0));
}

/// Whether `v` is computed from weights and constants alone (the runtime
/// then runs its steps once, on the first run, and keeps the result).
/// Bounded, so a deep chain is just not folded.
inline bool weightOnly(mlir::Value v, int depth = 0) {
  mlir::Operation *op = v.getDefiningOp();
  if (!op || depth > 16)
    return false;
  if (mlir::isa<graph::ParamOp, graph::ConstantOp>(op))
    return true;
  if (op->getNumRegions() || op->getNumOperands() == 0)
    return false;
  return llvm::all_of(op->getOperands(),
                      [&](mlir::Value o) { return weightOnly(o, depth + 1); });
}

inline void applyFusionPatterns(mlir::func::FuncOp f,
                                mlir::RewritePatternSet &&patterns) {
  mlir::GreedyRewriteConfig config;
  config.setUseTopDownTraversal(true)
      .enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(mlir::GreedySimplifyRegionLevel::Disabled);
  // Every rewrite removes the op it matched, so the driver converges; should
  // it stop at its iteration limit, the graph is still correct, only less
  // fused, so that is not an error.
  (void)mlir::applyPatternsGreedily(f, std::move(patterns), config);
}

} // namespace ingot

#endif // INGOT_PASSES_FUSEPATTERNS_H
