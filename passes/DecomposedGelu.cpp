//===- DecomposedGelu.cpp - GELU as exporters write it --------------------===//
//
// The match walks from the root multiply: its factors (through multiplies
// read only inside the product) must be x, 0.5 and 1 + erf(·) or
// 1 + tanh(·) of exactly the argument GELU takes. Constants match their
// f32 values to 1e-6 relative, which every exporter's literals meet and
// no other activation's do.
//
//===----------------------------------------------------------------------===//
#include "passes/DecomposedGelu.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace ingot::graph;

namespace ingot {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubeCoeff = 0.044715;

bool isScalar(Value v, double want) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
    return false;
  const double got = (*attr.getValues<APFloat>().begin()).convertToDouble();
  return std::abs(got - want) <= 1e-6 * std::abs(want);
}

/// The pattern's ops found so far; each non-root one must be read once.
struct Matcher {
  Value x;
  SmallVector<Operation *> ops;

  /// `v` is an op of type T read only by the pattern.
  template <typename T> T inner(Value v) {
    auto op = v.getDefiningOp<T>();
    if (!op || !op->hasOneUse())
      return nullptr;
    ops.push_back(op);
    return op;
  }

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
    if (auto d = inner<DivOp>(v))
      return d.getLhs() == x && isScalar(d.getRhs(), kSqrt2);
    auto m = inner<MulOp>(v);
    Value other;
    return m &&
           commutes(
               m, [](Value c) { return isScalar(c, 1 / kSqrt2); }, &other) &&
           other == x;
  }

  /// x³ as pow(x, 3), x · (x · x) or (x · x) · x.
  bool cube(Value v) {
    if (auto p = v.getDefiningOp<PowOp>())
      return p->hasOneUse() && p.getLhs() == x && isScalar(p.getRhs(), 3.0) &&
             inner<PowOp>(v);
    auto m = inner<MulOp>(v);
    Value other;
    return m &&
           commutes(
               m, [&](Value c) { return c == x; }, &other) &&
           (other == x ? false : square(other));
  }
  bool square(Value v) {
    auto m = inner<MulOp>(v);
    return m && m.getLhs() == x && m.getRhs() == x;
  }

  /// √(2/π) · (x + 0.044715 · x³).
  bool tanhArgument(Value v) {
    auto outer = inner<MulOp>(v);
    Value sum, cubeTerm;
    if (!outer ||
        !commutes(
            outer, [](Value c) { return isScalar(c, kSqrt2OverPi); }, &sum))
      return false;
    auto add = inner<AddOp>(sum);
    if (!add || !commutes(add, [&](Value c) { return c == x; }, &cubeTerm))
      return false;
    auto scaled = inner<MulOp>(cubeTerm);
    Value c3;
    return scaled &&
           commutes(
               scaled, [](Value c) { return isScalar(c, kCubeCoeff); }, &c3) &&
           cube(c3);
  }

  /// 1 + erf(x/√2) or 1 + tanh(...); sets *tanhForm.
  bool onePlus(Value v, bool *tanhForm) {
    auto add = inner<AddOp>(v);
    Value t;
    if (!add || !commutes(add, [](Value c) { return isScalar(c, 1.0); }, &t))
      return false;
    if (auto e = inner<ErfOp>(t)) {
      *tanhForm = false;
      return erfArgument(e.getInput());
    }
    auto h = inner<TanhOp>(t);
    *tanhForm = true;
    return h && tanhArgument(h.getInput());
  }
};

/// The factors of the product at `v`, through multiplies read once.
void collectFactors(Value v, bool isRoot, SmallVectorImpl<Value> &factors,
                    SmallVectorImpl<Operation *> &muls) {
  auto m = v.getDefiningOp<MulOp>();
  if (!m || (!isRoot && !m->hasOneUse()) || factors.size() > 3) {
    factors.push_back(v);
    return;
  }
  if (!isRoot)
    muls.push_back(m);
  collectFactors(m.getLhs(), false, factors, muls);
  collectFactors(m.getRhs(), false, factors, muls);
}

} // namespace

std::optional<DecomposedGelu> matchDecomposedGelu(MulOp root) {
  SmallVector<Value> factors;
  SmallVector<Operation *> muls;
  collectFactors(root.getResult(), true, factors, muls);
  if (factors.size() != 3)
    return std::nullopt;
  // Which factor is x: the one that is neither 0.5 nor 1 + f(·).
  for (Value x : factors) {
    if (x.getType() != root.getType())
      continue;
    Matcher m{x, {}};
    bool tanhForm = false, half = false, onePlus = false;
    for (Value f : factors) {
      if (f == x)
        continue;
      if (!half && isScalar(f, 0.5))
        half = true;
      else if (!onePlus && m.onePlus(f, &tanhForm))
        onePlus = true;
    }
    if (!half || !onePlus || llvm::count(factors, x) != 1)
      continue;
    DecomposedGelu g{x, tanhForm, {}};
    g.inner.append(muls.begin(), muls.end());
    g.inner.append(m.ops.begin(), m.ops.end());
    // Every reader of x must be inside the pattern or the root.
    for (Operation *user : x.getUsers())
      if (user != root && !llvm::is_contained(g.inner, user))
        return std::nullopt;
    llvm::sort(g.inner, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return g;
  }
  return std::nullopt;
}

} // namespace ingot
