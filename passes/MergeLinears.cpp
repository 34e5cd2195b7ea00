//===- MergeLinears.cpp - Linears sharing an input into one GEMM ----------===//
//
// At decode, each linear is a pass over its weights with the same few rows
// of x: merging Q/K/V (or gate/up) makes one longer pass, one kernel launch
// and one x tile instead of three. The merged weight is still a reference:
// an ingot.param listing its parts, concatenated by the artifact writer.
//
// The merge is a walk, not a rewrite pattern: a group is every mergeable
// linear of one input anywhere in the function, formed in block order of
// its first member and capped at max-merged, which no match rooted at one
// op sees. The silu_mul packing that follows is a local pattern; it runs
// in one walk (walkAndApplyPatterns) because the greedy driver would also
// erase the params the merge left dead, which ingot-canonicalize does.
//
//===----------------------------------------------------------------------===//
#include "passes/ColumnSlice.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace ingot {
#define GEN_PASS_DEF_MERGELINEARS
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// A plain weight reference (not already merged or packed).
ParamOp plainParam(Value v) {
  auto p = v ? v.getDefiningOp<ParamOp>() : nullptr;
  return p && !p.getParts() && p.getLayout() == "row-major" && !p.getQuant()
             ? p
             : nullptr;
}

/// Linears that can be merged agree on all of this.
struct MergeKey {
  Value input;
  std::string layout, activation;
  Type weightElement, biasElement; // null bias: none of them has one
};

/// The key of a mergeable linear, or nullopt.
std::optional<MergeKey> keyOf(LinearOp l) {
  if (l.getResidual() || (l.getWLayout() != "nk" && l.getWLayout() != "kn"))
    return std::nullopt;
  ParamOp w = plainParam(l.getWeight());
  if (!w || (l.getBias() && !plainParam(l.getBias())))
    return std::nullopt;
  MergeKey k;
  k.input = l.getInput();
  k.layout = l.getWLayout().str();
  k.activation = l.getActivation().str();
  k.weightElement = w.getType().getElementType();
  if (l.getBias())
    k.biasElement = cast<RankedTensorType>(l.getBias().getType())
                        .getElementType();
  return k;
}

bool sameGroup(const MergeKey &a, const MergeKey &b) {
  return a.input == b.input && a.layout == b.layout &&
         a.activation == b.activation && a.weightElement == b.weightElement &&
         a.biasElement == b.biasElement;
}

/// One param concatenating the params `ps` along `axis`.
ParamOp mergedParam(OpBuilder &b, ArrayRef<ParamOp> ps, int64_t axis) {
  ParamOp front = ps.front();
  SmallVector<int64_t> shape(front.getType().getShape());
  shape[axis] = 0;
  std::string name;
  SmallVector<StringRef> parts;
  for (ParamOp p : llvm::to_vector(ps)) {
    shape[axis] += p.getType().getDimSize(axis);
    name += (name.empty() ? "" : "+") + p.getName().str();
    parts.push_back(p.getName());
  }
  auto type = RankedTensorType::get(shape, front.getType().getElementType());
  return ParamOp::create(b, front.getLoc(), type,
                         b.getStringAttr(name), b.getStrArrayAttr(parts),
                         b.getI64IntegerAttr(axis),
                         b.getStringAttr("row-major"), /*quant=*/nullptr);
}

/// Merges `group` (same key, in block order) at the first one's position.
void merge(ArrayRef<LinearOp> group) {
  LinearOp first = group.front();
  OpBuilder b(first);
  const bool kn = first.getWLayout() == "kn";
  SmallVector<ParamOp> weights, biases;
  SmallVector<Location> locs;
  for (LinearOp l : group) {
    weights.push_back(plainParam(l.getWeight()));
    if (l.getBias())
      biases.push_back(plainParam(l.getBias()));
    locs.push_back(l.getLoc());
  }
  ParamOp w = mergedParam(b, weights, kn ? 1 : 0);
  Value bias = biases.empty() ? Value() : mergedParam(b, biases, 0);
  auto outType = cast<RankedTensorType>(first.getType());
  SmallVector<int64_t> shape(outType.getShape());
  shape.back() = w.getType().getDimSize(kn ? 1 : 0);
  auto type = RankedTensorType::get(shape, outType.getElementType());
  auto merged = LinearOp::create(b, b.getFusedLoc(locs), type,
                                 first.getInput(), w, bias, Value(),
                                 first.getWLayoutAttr(),
                                 first.getActivationAttr());
  int64_t begin = 0;
  for (LinearOp l : group) {
    int64_t n = cast<RankedTensorType>(l.getType()).getShape().back();
    Value part = makeColumnSlice(b, l.getLoc(), merged, begin, begin + n,
                                 l.getType());
    l.getResult().replaceAllUsesWith(part);
    begin += n;
  }
  for (LinearOp l : group)
    l.erase();
}

/// silu_mul(slice [0, F), slice [F, 2F)) of one tensor with 2F columns
/// -> the one-operand silu_mul that reads it in place.
struct PackSiluMul : OpRewritePattern<SiluMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SiluMulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getUp())
      return rewriter.notifyMatchFailure(op, "already one operand");
    std::optional<ColumnSlice> gate = matchColumnSlice(op.getGate()),
                               up = matchColumnSlice(op.getUp());
    if (!gate || !up || gate->source != up->source || gate->begin != 0 ||
        up->begin != gate->end || up->end - up->begin != gate->end ||
        cast<RankedTensorType>(gate->source.getType()).getShape().back() !=
            up->end)
      return rewriter.notifyMatchFailure(op, "not the halves of one tensor");
    rewriter.replaceOpWithNewOp<SiluMulOp>(op, op.getType(), gate->source,
                                           Value());
    return success();
  }
};

struct MergeLinearsPass
    : public ingot::impl::MergeLinearsBase<MergeLinearsPass> {
  using MergeLinearsBase::MergeLinearsBase;

  void runOnOperation() override {
    // Groups in block order of their first linear, members in block order.
    SmallVector<std::pair<MergeKey, SmallVector<LinearOp>>> groups;
    getOperation().walk([&](LinearOp l) {
      std::optional<MergeKey> key = keyOf(l);
      if (!key)
        return;
      for (auto &[k, members] : groups)
        if (sameGroup(k, *key) &&
            static_cast<int64_t>(members.size()) < maxMerged) {
          members.push_back(l);
          return;
        }
      groups.push_back({*key, {l}});
    });
    for (auto &[key, members] : groups)
      if (members.size() >= 2)
        merge(members);
    RewritePatternSet patterns(&getContext());
    patterns.add<PackSiluMul>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
