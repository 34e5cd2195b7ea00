//===- Canonicalize.cpp - Fold shape computations, drop dead ops ----------===//
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace ingot {
#define GEN_PASS_DEF_CANONICALIZE
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;

namespace {

struct CanonicalizePass
    : public ingot::impl::CanonicalizeBase<CanonicalizePass> {
  using CanonicalizeBase::CanonicalizeBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto *dialect =
        getContext().getLoadedDialect<ingot::graph::IngotDialect>();
    dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op :
         getContext().getRegisteredOperations())
      if (&op.getDialect() == dialect)
        op.getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setMaxIterations(maxIterations);
    // Folding alone may not converge in a bounded number of rounds on huge
    // graphs; an unconverged graph is still correct, so it is not an error.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }
};

} // namespace
