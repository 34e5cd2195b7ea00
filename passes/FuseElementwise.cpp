//===- FuseElementwise.cpp - Chains of elementwise ops into one kernel ----===//
//
// Each elementwise kernel reads its operands from memory and writes its
// result back; a chain of k of them moves k intermediates through memory
// that one `fused_elementwise` keeps in L1. Groups grow from a root (the
// last op of a chain) towards its producers, taking a producer only when
// every one of its users is already in the group, so no intermediate is
// needed outside and the fused op can replace the root alone.
//
// This stays a walk rather than a rewrite pattern: the groups partition
// the block, taken from the last root backwards, and every group is
// chosen on the unfused graph before any is rewritten (max-ops and
// max-inputs cut a chain where this order says). A greedy driver would
// pick roots in its own worklist order and re-match ops as their
// neighbours are rewritten, so the cuts, and the kernels, could differ.
//
//===----------------------------------------------------------------------===//
#include "passes/FusePatterns.h"
#include "passes/Passes.h"

#include "ingot/FusedProgram.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace ingot {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot::graph;
using ingot::scalarConstant;

namespace {

/// One op as a program instruction: the opcode and its extra constants.
struct Lowered {
  std::string opcode;
  SmallVector<double, 2> params; // alpha (and beta) of parametric kinds
};

/// Whether every operand and the result of `op` are f32 tensors.
bool isAllF32(Operation *op) {
  auto isF32 = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.getElementType().isF32();
  };
  return op->getNumResults() == 1 && isF32(op->getResult(0).getType()) &&
         llvm::all_of(op->getOperandTypes(), isF32);
}

/// Whether `op` converts an i32 tensor to f32 (matmul_integer's result on
/// its way to the dequantising multiply): the region reads the i32 input
/// and converts it with `from_i32`.
bool isCastFromI32(Operation *op) {
  auto cast = dyn_cast<CastOp>(op);
  if (!cast)
    return false;
  auto in = dyn_cast<RankedTensorType>(cast.getInput().getType());
  auto out = dyn_cast<RankedTensorType>(cast.getType());
  return in && out && in.getElementType().isSignlessInteger(32) &&
         out.getElementType().isF32();
}

/// The opcode `op` becomes, or nullopt if it is not fusible.
std::optional<Lowered> lowerOp(Operation *op) {
  if (isCastFromI32(op))
    return Lowered{"from_i32", {}};
  if (!isAllF32(op))
    return std::nullopt;
  // These kernels' names are their opcodes.
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, SqrtOp, NegOp, ExpOp, ErfOp,
          TanhOp, SigmoidOp, ReluOp>(op))
    return Lowered{op->getName().stripDialect().str(), {}};
  if (auto g = dyn_cast<GeluOp>(op))
    return Lowered{g.getApproximate() == "tanh" ? "gelu_tanh" : "gelu", {}};
  if (auto b = dyn_cast<BinaryMathOp>(op)) {
    if (b.getKind() != "max" && b.getKind() != "min")
      return std::nullopt;
    return Lowered{b.getKind().str(), {}};
  }
  auto u = dyn_cast<UnaryMathOp>(op);
  // The f32 kinds (`not` is bool-only and never gets here).
  if (!u || !llvm::is_contained({"reciprocal", "log", "abs", "softplus", "mish",
                                 "sin", "cos", "floor", "ceil", "round", "sign",
                                 "leaky_relu", "elu", "hard_sigmoid"},
                                u.getKind()))
    return std::nullopt;
  Lowered l{u.getKind().str(), {}};
  if (u.getAlpha())
    l.params.push_back(u.getAlpha()->convertToDouble());
  if (u.getKind() == "hard_sigmoid" && u.getBeta())
    l.params.push_back(u.getBeta()->convertToDouble());
  return l;
}

/// A group of ops in block order; the last one is the root.
struct Group {
  SmallVector<Operation *> ops;
  /// A reduction over the last axis of the root's result, taken over.
  Operation *reduction = nullptr;
  StringRef reduceKind;
  int64_t keepdims = 1;
};

/// Fills g's reduction when the root's only user reduces its last axis in
/// a way the kernel reproduces (reduce_mean; reduce sum/max).
void takeTrailingReduction(Group &g) {
  Operation *root = g.ops.back();
  if (!root->hasOneUse())
    return;
  Operation *user = *root->getUsers().begin();
  int64_t rank = cast<RankedTensorType>(root->getResult(0).getType()).getRank();
  auto lastAxisOnly = [&](ArrayRef<int64_t> axes) {
    return rank > 0 && axes.size() == 1 &&
           (axes[0] == -1 || axes[0] == rank - 1);
  };
  if (auto m = dyn_cast<ReduceMeanOp>(user); m && lastAxisOnly(m.getAxes())) {
    g.reduction = user;
    g.reduceKind = "mean";
    g.keepdims = m.getKeepdims();
  } else if (auto r = dyn_cast<ReduceOp>(user);
             r && !r.getAxesInput() && lastAxisOnly(r.getAxes()) &&
             (r.getKind() == "sum" || r.getKind() == "max")) {
    g.reduction = user;
    g.reduceKind = r.getKind();
    g.keepdims = r.getKeepdims();
  }
}

/// The tensor inputs of `g` in first-use order; one-element constants stay
/// out when `foldConstants`.
llvm::SetVector<Value> groupInputs(const Group &g, bool foldConstants) {
  llvm::SmallPtrSet<Operation *, 16> members(g.ops.begin(), g.ops.end());
  llvm::SetVector<Value> inputs;
  for (Operation *op : g.ops)
    for (Value v : op->getOperands())
      if (!members.contains(v.getDefiningOp()) &&
          !(foldConstants && scalarConstant(v)))
        inputs.insert(v);
  return inputs;
}

/// Whether the broadcast of `inputs` has the shape of `type` (a folded
/// constant of higher rank than every input would have widened it).
bool broadcastsTo(const llvm::SetVector<Value> &inputs, RankedTensorType type) {
  std::vector<ingot::shape::Shape> shapes;
  for (Value v : inputs)
    shapes.push_back(shapeOf(v.getType()));
  ingot::shape::Shape out;
  std::string error;
  return !inputs.empty() && ingot::shape::broadcast(shapes, &out, &error) &&
         out.size() == static_cast<size_t>(type.getRank());
}

/// Builds the program of `g` and replaces its root (or the reduction of
/// it) with one fused op;
/// false (IR untouched) when the group has no tensor input.
bool fuseGroup(const Group &g) {
  Operation *root = g.ops.back();
  auto rootType = cast<RankedTensorType>(root->getResult(0).getType());
  // Tensor inputs first (so their refs are 0..n-1).
  llvm::SetVector<Value> inputs = groupInputs(g, /*foldConstants=*/true);
  bool foldConstants = broadcastsTo(inputs, rootType);
  if (!foldConstants) {
    inputs = groupInputs(g, /*foldConstants=*/false);
    if (llvm::all_of(inputs, [](Value v) { return scalarConstant(v); }))
      return false; // constants only: nothing to stream
  }
  const int64_t n = static_cast<int64_t>(inputs.size());

  std::string ops;
  SmallVector<int64_t> args;
  SmallVector<double> constants;
  llvm::DenseMap<Value, int64_t> ref;
  for (auto [i, v] : llvm::enumerate(inputs))
    ref[v] = static_cast<int64_t>(i);
  auto emit = [&](StringRef opcode, int64_t a, int64_t b) {
    if (!ops.empty())
      ops += ' ';
    ops += opcode;
    args.append({a, b});
    return n + static_cast<int64_t>(args.size() / 2) - 1;
  };
  auto constantIndex = [&](double value) {
    constants.push_back(value);
    return static_cast<int64_t>(constants.size()) - 1;
  };
  // A constant used twice is loaded once.
  auto refOf = [&](Value v) {
    auto it = ref.find(v); // inputs, results, constants already loaded
    if (it != ref.end())
      return it->second;
    int64_t r = emit("const", constantIndex(*scalarConstant(v)), -1);
    ref[v] = r;
    return r;
  };
  for (Operation *op : g.ops) {
    Lowered l = *lowerOp(op);
    int64_t a = refOf(op->getOperand(0));
    int64_t b = op->getNumOperands() > 1 ? refOf(op->getOperand(1)) : -1;
    if (!l.params.empty()) {
      b = constantIndex(l.params[0]);
      for (double p : ArrayRef(l.params).drop_front())
        constantIndex(p);
    }
    ref[op->getResult(0)] = emit(l.opcode, a, b);
  }

  SmallVector<Location> locs{root->getLoc()};
  for (Operation *op : g.ops)
    if (op != root)
      locs.push_back(op->getLoc());
  // The fused op replaces the last op: the reduction if one is taken over.
  Operation *last = g.reduction ? g.reduction : root;
  if (g.reduction)
    locs.push_back(g.reduction->getLoc());
  OpBuilder b(last);
  auto fused = FusedElementwiseOp::create(
      b, b.getFusedLoc(locs), last->getResult(0).getType(),
      inputs.getArrayRef(), b.getStringAttr(ops), b.getDenseI64ArrayAttr(args),
      b.getDenseF64ArrayAttr(constants),
      g.reduction ? b.getStringAttr(g.reduceKind) : StringAttr(),
      g.reduction ? b.getI64IntegerAttr(g.keepdims) : IntegerAttr());
  last->getResult(0).replaceAllUsesWith(fused.getResult());
  if (g.reduction)
    g.reduction->erase();
  llvm::SetVector<Operation *> folded;
  for (Operation *op : g.ops)
    for (Value v : op->getOperands())
      if (!inputs.contains(v) && scalarConstant(v))
        folded.insert(v.getDefiningOp());
  for (Operation *op : llvm::reverse(g.ops))
    op->erase();
  // Constants now in the program are dead unless something else reads them.
  for (Operation *c : folded)
    if (c->use_empty())
      c->erase();
  return true;
}

struct FuseElementwisePass
    : public ingot::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  /// Whether `op` may join a group whose root has `rootType`: it must be
  /// fusible and as big as the result, since the kernel computes every
  /// instruction once per output element.
  bool canJoin(Operation *op, RankedTensorType rootType) const {
    return lowerOp(op) && op->getResult(0).getType() == rootType;
  }

  /// Tensor inputs `g` would have with `extra` added.
  int64_t countInputs(const llvm::SmallPtrSetImpl<Operation *> &members,
                      Operation *extra) const {
    llvm::SmallPtrSet<Value, 8> seen;
    auto visit = [&](Operation *op) {
      for (Value v : op->getOperands())
        if (!members.contains(v.getDefiningOp()) &&
            v.getDefiningOp() != extra && !scalarConstant(v))
          seen.insert(v);
    };
    for (Operation *op : members)
      visit(op);
    visit(extra);
    return static_cast<int64_t>(seen.size());
  }

  /// Grows a group from `root`, in reverse block order.
  Group grow(Operation *root, llvm::SmallPtrSetImpl<Operation *> &taken) {
    auto rootType = cast<RankedTensorType>(root->getResult(0).getType());
    llvm::SmallPtrSet<Operation *, 16> members{root};
    bool changed = true;
    while (changed && static_cast<int64_t>(members.size()) < maxOps) {
      changed = false;
      for (Operation *op : llvm::to_vector(members)) {
        for (Value v : op->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (!def || members.contains(def) || taken.contains(def) ||
              def->getBlock() != root->getBlock() || !canJoin(def, rootType))
            continue;
          // Its result must be needed only inside the group.
          if (!llvm::all_of(def->getUsers(),
                            [&](Operation *u) { return members.contains(u); }))
            continue;
          if (countInputs(members, def) > maxInputs ||
              static_cast<int64_t>(members.size()) >= maxOps)
            continue;
          members.insert(def);
          changed = true;
        }
      }
    }
    Group g;
    g.ops.assign(members.begin(), members.end());
    llvm::sort(g.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return g;
  }

  void runOnOperation() override {
    SmallVector<Group> groups;
    llvm::SmallPtrSet<Operation *, 32> taken;
    for (Block &block : getOperation().getBody()) {
      // Roots are met before their producers, so each group is maximal.
      for (Operation &op : llvm::reverse(block)) {
        if (taken.contains(&op) || !lowerOp(&op))
          continue;
        Group g = grow(&op, taken);
        taken.insert(g.ops.begin(), g.ops.end());
        if (reductions)
          takeTrailingReduction(g);
        if (g.ops.size() + (g.reduction ? 1 : 0) >= 2)
          groups.push_back(std::move(g));
      }
    }
    for (const Group &g : groups)
      (void)fuseGroup(g);
  }
};

} // namespace
