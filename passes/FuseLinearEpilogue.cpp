//===- FuseLinearEpilogue.cpp - Activations and residuals into linear -----===//
//
// An activation or residual add after a linear is another full pass over
// its output; inside the linear kernel it is applied to each output tile
// while the tile is still in cache. Matmuls against a 2-D weight (what
// ONNX exporters write for linear layers) are raised to `linear` first so
// they get the same epilogues.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

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

/// Rebuilds `l` before `at` with a residual and/or activation, replacing
/// `at`'s result.
void rebuild(LinearOp l, Operation *at, Value residual, StringRef activation) {
  OpBuilder b(at);
  auto fused = LinearOp::create(
      b, b.getFusedLoc({l.getLoc(), at->getLoc()}), l.getType(), l.getInput(),
      l.getWeight(), l.getBias(), residual, l.getWLayoutAttr(),
      b.getStringAttr(activation));
  at->getResult(0).replaceAllUsesWith(fused.getResult());
  at->erase();
  l.erase();
}

/// matmul(x, W) with W a 2-D weight param -> linear kn.
void raiseMatMul(MatMulOp m) {
  auto w = m.getRhs().getDefiningOp<ParamOp>();
  auto x = cast<RankedTensorType>(m.getLhs().getType());
  if (!w || w.getType().getRank() != 2 || x.getRank() < 2 ||
      !x.getElementType().isF32() || m.getType() == nullptr)
    return;
  Type we = w.getType().getElementType();
  if (!we.isF32() && !we.isF16() && !we.isBF16())
    return;
  OpBuilder b(m);
  auto l = LinearOp::create(b, m.getLoc(), m.getType(), m.getLhs(), w,
                            Value(), Value(), b.getStringAttr("kn"),
                            b.getStringAttr("none"));
  m.getResult().replaceAllUsesWith(l.getResult());
  m.erase();
}

/// add(linear(x), bias) with a 1-D [N] weight param -> linear with bias.
bool fuseBias(AddOp add) {
  for (auto [lhs, rhs] : {std::pair{add.getLhs(), add.getRhs()},
                          std::pair{add.getRhs(), add.getLhs()}}) {
    LinearOp l = soleLinear(lhs, /*needNoActivation=*/true);
    auto bias = rhs.getDefiningOp<ParamOp>();
    if (!l || l.getBias() || !bias || bias.getType().getRank() != 1 ||
        add.getType() != l.getType() ||
        bias.getType().getDimSize(0) !=
            cast<RankedTensorType>(l.getType()).getShape().back())
      continue;
    OpBuilder b(add);
    auto fused = LinearOp::create(
        b, b.getFusedLoc({l.getLoc(), add.getLoc()}), l.getType(),
        l.getInput(), l.getWeight(), bias, Value(), l.getWLayoutAttr(),
        l.getActivationAttr());
    add.getResult().replaceAllUsesWith(fused.getResult());
    add.erase();
    l.erase();
    return true;
  }
  return false;
}

/// add(linear(x), r) with r of the result's type -> linear with residual.
void fuseResidual(AddOp add) {
  for (auto [lhs, rhs] : {std::pair{add.getLhs(), add.getRhs()},
                          std::pair{add.getRhs(), add.getLhs()}}) {
    LinearOp l = soleLinear(lhs, /*needNoActivation=*/false);
    if (!l || rhs.getType() != add.getType() || l.getType() != add.getType())
      continue;
    rebuild(l, add, rhs, l.getActivation());
    return;
  }
}

/// The linear activation an op computes from its operand, if any.
std::optional<StringRef> activationOf(Operation *op) {
  if (isa<ReluOp>(op))
    return StringRef("relu");
  if (auto g = dyn_cast<GeluOp>(op))
    return g.getApproximate() == "tanh" ? StringRef("gelu_tanh")
                                        : StringRef("gelu");
  return std::nullopt;
}

struct FuseLinearEpiloguePass
    : public ingot::impl::FuseLinearEpilogueBase<FuseLinearEpiloguePass> {
  using FuseLinearEpilogueBase::FuseLinearEpilogueBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    SmallVector<MatMulOp> matmuls;
    f.walk([&](MatMulOp m) { matmuls.push_back(m); });
    for (MatMulOp m : matmuls)
      raiseMatMul(m);
    SmallVector<AddOp> adds;
    f.walk([&](AddOp a) { adds.push_back(a); });
    SmallVector<AddOp> rest;
    for (AddOp a : adds)
      if (!fuseBias(a))
        rest.push_back(a);
    if (activation)
      fuseActivations(f);
    if (residual)
      for (AddOp a : rest)
        fuseResidual(a);
  }

  void fuseActivations(func::FuncOp f) {
    SmallVector<Operation *> ops;
    f.walk([&](Operation *op) {
      if (isa<ReluOp, GeluOp, MulOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto mul = dyn_cast<MulOp>(op)) {
        fuseSilu(mul);
        continue;
      }
      LinearOp l = soleLinear(op->getOperand(0), /*needNoActivation=*/true);
      if (l && op->getResult(0).getType() == l.getType())
        rebuild(l, op, Value(), *activationOf(op));
    }
  }

  /// mul(y, sigmoid(y)) with y a linear read by nothing else: silu.
  void fuseSilu(MulOp mul) {
    for (auto [a, s] : {std::pair{mul.getLhs(), mul.getRhs()},
                        std::pair{mul.getRhs(), mul.getLhs()}}) {
      auto sig = s.getDefiningOp<SigmoidOp>();
      auto l = a.getDefiningOp<LinearOp>();
      if (!sig || !l || sig.getInput() != a || !sig->hasOneUse() ||
          l.getResidual() || l.getActivation() != "none" ||
          mul.getType() != l.getType() ||
          std::distance(a.use_begin(), a.use_end()) != 2)
        continue;
      OpBuilder b(mul);
      auto fused = LinearOp::create(
          b, b.getFusedLoc({l.getLoc(), mul.getLoc()}), l.getType(),
          l.getInput(), l.getWeight(), l.getBias(), Value(),
          l.getWLayoutAttr(), b.getStringAttr("silu"));
      mul.getResult().replaceAllUsesWith(fused.getResult());
      mul.erase();
      sig.erase();
      l.erase();
      return;
    }
  }
};

} // namespace
