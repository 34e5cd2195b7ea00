//===- RaiseGelu.cpp - GELU as exporters write it, as one op --------------===//
//
// PyTorch's and jax2tf's ONNX exports write GELU as elementwise ops: the
// erf form 0.5 · x · (1 + erf(x / √2)) and the tanh form
// 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))), the three factors
// multiplied in any order, x / √2 as a div or a mul by 1/√2, x³ as pow or
// products. As one `ingot.gelu` the linear epilogue absorbs it
// (ingot-fuse-linear-epilogue) and elsewhere it is one opcode of a fused
// kernel instead of 5 to 14.
//
// The match walks from the root multiply: its factors (through multiplies
// read only inside the product) must be x, 0.5 and 1 + erf(·) or
// 1 + tanh(·) of exactly the argument GELU takes. Constants match their
// f32 values to 1e-6 relative, which every exporter's literals meet and
// no other activation's do.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace ingot {
#define GEN_PASS_DEF_RAISEGELU
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;

namespace {
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubeCoeff = 0.044715;

/// Exporters' literals of the GELU constants, to 1e-6 relative.
bool isScalar(Value v, double want) {
  return ingot::isScalarConstant(v, want, 1e-6);
}

/// The factors of the product at `v` (read any number of times when
/// `top`), through multiplies read once; false past 8 factors.
bool flattenProduct(Value v, bool top, SmallVectorImpl<Value> &factors) {
  auto m = v.getDefiningOp<MulOp>();
  if (!m || (!top && !m->hasOneUse())) {
    factors.push_back(v);
    return factors.size() <= 8;
  }
  return flattenProduct(m.getLhs(), false, factors) &&
         flattenProduct(m.getRhs(), false, factors);
}

/// The parts of a GELU of x below its final product.
struct Matcher {
  Value x;

  /// One operand of the binary `op` satisfies isOther; *other is the rest.
  template <typename Pred>
  bool commutes(Operation *op, Pred isOther, Value *other) {
    for (auto [p, q] : {std::pair{op->getOperand(0), op->getOperand(1)},
                        std::pair{op->getOperand(1), op->getOperand(0)}})
      if (isOther(q)) {
        *other = p;
        return true;
      }
    return false;
  }

  /// x / √2 or x · (1/√2).
  bool erfArgument(Value v) {
    if (auto d = ingot::definedForOneReader<DivOp>(v))
      return d.getLhs() == x && isScalar(d.getRhs(), kSqrt2);
    auto m = ingot::definedForOneReader<MulOp>(v);
    Value other;
    return m &&
           commutes(
               m, [](Value c) { return isScalar(c, 1 / kSqrt2); }, &other) &&
           other == x;
  }

  /// 0.044715 · x³ as any product of the constant and three x, through
  /// multiplies read once, x³ possibly pow(x, 3): torch writes
  /// pow(x, 3) · c, jax2tf x · (x · (c · x)).
  bool scaledCube(Value v) {
    SmallVector<Value> factors;
    if (!ingot::definedForOneReader<MulOp>(v) ||
        !flattenProduct(v, /*top=*/false, factors))
      return false;
    int xs = 0, coefficients = 0;
    for (Value f : factors) {
      if (f == x)
        ++xs;
      else if (isScalar(f, kCubeCoeff))
        ++coefficients;
      else if (auto p = ingot::definedForOneReader<PowOp>(f);
               p && p.getLhs() == x && isScalar(p.getRhs(), 3.0))
        xs += 3;
      else
        return false;
    }
    return xs == 3 && coefficients == 1;
  }

  /// √(2/π) · (x + 0.044715 · x³).
  bool tanhArgument(Value v) {
    auto outer = ingot::definedForOneReader<MulOp>(v);
    Value sum, cubeTerm;
    if (!outer ||
        !commutes(
            outer, [](Value c) { return isScalar(c, kSqrt2OverPi); }, &sum))
      return false;
    auto add = ingot::definedForOneReader<AddOp>(sum);
    return add &&
           commutes(
               add, [&](Value c) { return c == x; }, &cubeTerm) &&
           scaledCube(cubeTerm);
  }

  /// 1 + erf(x/√2) or 1 + tanh(...); sets *tanhForm.
  bool onePlus(Value v, bool *tanhForm) {
    auto add = ingot::definedForOneReader<AddOp>(v);
    Value t;
    if (!add || !commutes(add, [](Value c) { return isScalar(c, 1.0); }, &t))
      return false;
    if (auto e = ingot::definedForOneReader<ErfOp>(t)) {
      *tanhForm = false;
      return erfArgument(e.getInput());
    }
    auto h = ingot::definedForOneReader<TanhOp>(t);
    *tanhForm = true;
    return h && tanhArgument(h.getInput());
  }
};

/// x and the form of the GELU whose final multiply is `root`, if it is one.
/// Its other ops are read only inside the pattern (x may have readers of
/// its own), so the rewrite leaves them dead.
std::optional<std::pair<Value, bool>> matchGelu(MulOp root) {
  SmallVector<Value> factors;
  if (!flattenProduct(root.getResult(), /*top=*/true, factors) ||
      factors.size() != 3)
    return std::nullopt;
  // Which factor is x: the one that is neither 0.5 nor 1 + f(·).
  for (Value x : factors) {
    if (x.getType() != root.getType() || llvm::count(factors, x) != 1)
      continue;
    Matcher m{x};
    bool tanhForm = false, half = false, onePlus = false;
    for (Value f : factors) {
      if (f == x)
        continue;
      if (!half && isScalar(f, 0.5))
        half = true;
      else if (!onePlus && m.onePlus(f, &tanhForm))
        onePlus = true;
    }
    if (half && onePlus)
      return std::pair{x, tanhForm};
  }
  return std::nullopt;
}

/// The decomposed GELU ending at a multiply -> ingot.gelu.
struct RaiseDecomposedGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(mul.getType());
    std::optional<std::pair<Value, bool>> gelu =
        type && type.getElementType().isF32() ? matchGelu(mul) : std::nullopt;
    if (!gelu)
      return rewriter.notifyMatchFailure(mul, "not a decomposed f32 GELU");
    rewriter.replaceOpWithNewOp<GeluOp>(
        mul, type, gelu->first,
        rewriter.getStringAttr(gelu->second ? "tanh" : "none"));
    return success();
  }
};

struct RaiseGeluPass : public ingot::impl::RaiseGeluBase<RaiseGeluPass> {
  using RaiseGeluBase::RaiseGeluBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseDecomposedGelu>(&getContext());
    ingot::applyFusionPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
