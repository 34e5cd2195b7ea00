//===- LowerToPlan.cpp - Graph ops to buffers and kernel steps ------------===//
#include "passes/Passes.h"

#include "ingot/KernelTable.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace ingot {
#define GEN_PASS_DEF_LOWERTOPLAN
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;

namespace {

/// The plan form of a param's #ingot.quant: its format name and group.
StringAttr quantFormatOf(graph::ParamOp p) {
  auto q = p.getQuantAttr();
  return q ? StringAttr::get(p.getContext(), q.getFormat()) : StringAttr();
}
IntegerAttr quantGroupOf(graph::ParamOp p) {
  auto q = p.getQuantAttr();
  return IntegerAttr::get(IntegerType::get(p.getContext(), 64),
                          q ? q.getGroup() : 0);
}

/// Checks a step against the kernel table (ingot/KernelTable.h), so that a
/// lowering bug is reported on the op here rather than by the artifact
/// validator.
LogicalResult checkAgainstTable(Operation *op, StringRef kernel, size_t ins,
                                size_t outs) {
  const KernelSpec *spec =
      findKernelSpec(std::string_view(kernel.data(), kernel.size()));
  if (!spec)
    return op->emitOpError("lowers to kernel '")
           << kernel << "', which the kernel table does not declare";
  const KernelSignature &sig = spec->sig;
  if (ins < sig.minInputs() || ins > sig.maxInputs())
    return op->emitOpError("gives kernel '")
           << kernel << "' " << ins << " inputs; it takes (" << sig.inputNames()
           << ")";
  if (outs < sig.minOutputs() || outs > sig.maxOutputs())
    return op->emitOpError("gives kernel '")
           << kernel << "' " << outs << " outputs; it has " << sig.maxOutputs();
  return success();
}

MemRefType toMemRef(Type type) {
  auto t = cast<RankedTensorType>(type);
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// The source node name the importer attached as a NameLoc, if any.
std::string originOf(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return op->getName().getStringRef().str();
}

/// Renames `ingot.*` argument/result attributes to `plan.*`.
DictionaryAttr renameAttrs(DictionaryAttr attrs, MLIRContext *ctx) {
  if (!attrs)
    return DictionaryAttr::get(ctx, {});
  SmallVector<NamedAttribute> renamed;
  for (NamedAttribute a : attrs) {
    StringRef name = a.getName().getValue();
    if (name.consume_front("ingot."))
      renamed.emplace_back(StringAttr::get(ctx, "plan." + name), a.getValue());
    else
      renamed.push_back(a);
  }
  return DictionaryAttr::get(ctx, renamed);
}

/// Lowers one graph function's ops, in order, into the plan function's
/// entry block; ingot.if regions are flattened into guarded step ranges.
class PlanLowering {
public:
  PlanLowering(func::FuncOp planFunc, OpBuilder &b)
      : planFunc(planFunc), body(&planFunc.getBody().front()), b(b) {}

  IRMapping map;
  LogicalResult lowerBlock(Block &block);

private:
  LogicalResult lowerOp(Operation &op);
  LogicalResult lowerCompute(Operation &op);
  LogicalResult lowerIf(graph::IfOp op);
  LogicalResult lowerFail(graph::FailOp op);
  Value alloc(Location loc, Value result, ArrayRef<int64_t> bound);
  SmallVector<Value> lookupOperands(Operation &op);
  plan::KernelOp control(Location loc, StringRef kernel, ValueRange ins,
                         StringRef origin);

  func::FuncOp planFunc;
  Block *body;
  OpBuilder &b;
  Value none;
};

LogicalResult PlanLowering::lowerBlock(Block &block) {
  for (Operation &op : block)
    if (failed(lowerOp(op)))
      return failure();
  return success();
}

LogicalResult PlanLowering::lowerOp(Operation &op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    SmallVector<Value> outs;
    for (Value v : ret.getOperands())
      outs.push_back(map.lookup(v));
    func::ReturnOp::create(b, ret.getLoc(), outs);
    return success();
  }
  if (auto param = dyn_cast<graph::ParamOp>(op)) {
    map.map(param.getResult(),
            plan::ParamOp::create(b, param.getLoc(), toMemRef(param.getType()),
                                  param.getNameAttr(), param.getPartsAttr(),
                                  param.getConcatAxisAttr(),
                                  param.getLayoutAttr(), quantFormatOf(param),
                                  quantGroupOf(param)));
    return success();
  }
  if (auto constant = dyn_cast<graph::ConstantOp>(op)) {
    map.map(constant.getResult(),
            plan::ConstantOp::create(b, constant.getLoc(),
                                     toMemRef(constant.getType()),
                                     constant.getValue()));
    return success();
  }
  if (auto branch = dyn_cast<graph::IfOp>(op))
    return lowerIf(branch);
  if (isa<graph::YieldOp>(op)) // lowerIf copies what a branch yields
    return success();
  if (auto fail = dyn_cast<graph::FailOp>(op))
    return lowerFail(fail);
  if (op.getDialect() !=
          planFunc->getContext()->getLoadedDialect<graph::IngotDialect>() ||
      op.getNumResults() == 0)
    return op.emitOpError("cannot be lowered to a plan step");
  return lowerCompute(op);
}

/// An arena buffer for `result`, sized by `bound` where it is dynamic.
Value PlanLowering::alloc(Location loc, Value result, ArrayRef<int64_t> bound) {
  auto resultType = cast<RankedTensorType>(result.getType());
  SmallVector<int64_t> maxShape(resultType.getShape());
  if (!resultType.hasStaticShape())
    maxShape.assign(bound.begin(), bound.end());
  return plan::AllocOp::create(b, loc, toMemRef(resultType),
                               b.getDenseI64ArrayAttr(maxShape), IntegerAttr());
}

SmallVector<Value> PlanLowering::lookupOperands(Operation &op) {
  // Operands keep their positions: an absent optional before a present
  // one (operandSegmentSizes) becomes plan.none; absent ones at the end
  // are left off, as kernels read them as absent either way.
  SmallVector<Value> ins;
  auto segments = op.getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes");
  unsigned next = 0;
  if (segments) {
    for (int32_t size : segments.asArrayRef()) {
      if (size == 0)
        ins.push_back(Value());
      for (int32_t i = 0; i < size; ++i)
        ins.push_back(map.lookup(op.getOperand(next++)));
    }
    while (!ins.empty() && !ins.back())
      ins.pop_back();
  } else {
    for (Value v : op.getOperands())
      ins.push_back(map.lookup(v));
  }
  for (Value &v : ins)
    if (!v) {
      if (!none) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(body);
        none = plan::NoneOp::create(b, planFunc.getLoc(), b.getNoneType());
      }
      v = none;
    }
  return ins;
}

LogicalResult PlanLowering::lowerCompute(Operation &op) {
  // One arena buffer per result; fused ops' results share one bound.
  auto bound = op.getAttrOfType<DenseI64ArrayAttr>("ingot.max_shape");
  SmallVector<Value> outs;
  for (Value result : op.getResults()) {
    if (!cast<RankedTensorType>(result.getType()).hasStaticShape() && !bound)
      return op.emitOpError("has a dynamic result but no ingot.max_shape; "
                            "run ingot-compute-bounds first");
    outs.push_back(alloc(op.getLoc(), result,
                         bound ? bound.asArrayRef() : ArrayRef<int64_t>()));
  }
  StringRef kernel = op.getName().stripDialect();
  SmallVector<Value> ins = lookupOperands(op);
  if (failed(checkAgainstTable(&op, kernel, ins.size(), outs.size())))
    return failure();
  SmallVector<NamedAttribute> args;
  for (NamedAttribute a : op.getAttrs())
    if (!a.getName().getValue().starts_with("ingot.") &&
        a.getName().getValue() != "operandSegmentSizes")
      args.push_back(a);
  plan::KernelOp::create(b, op.getLoc(), b.getStringAttr(kernel), ins, outs,
                         b.getDictionaryAttr(args),
                         b.getStringAttr(originOf(&op)));
  for (auto [result, out] : llvm::zip(op.getResults(), outs))
    map.map(result, out);
  return success();
}

plan::KernelOp PlanLowering::control(Location loc, StringRef kernel,
                                     ValueRange ins, StringRef origin) {
  return plan::KernelOp::create(
      b, loc, b.getStringAttr(kernel), ins, ValueRange(),
      b.getDictionaryAttr({b.getNamedAttr("steps", b.getI64IntegerAttr(0))}),
      b.getStringAttr(origin));
}

/// Kernel steps of the plan block after `from`, up to the block's end.
int64_t stepsAfter(Operation *from) {
  int64_t n = 0;
  for (Operation *op = from->getNextNode(); op; op = op->getNextNode())
    n += isa<plan::KernelOp>(op);
  return n;
}

void setSteps(plan::KernelOp op, int64_t steps) {
  Builder b(op.getContext());
  op.setArgsAttr(b.getDictionaryAttr(
      {b.getNamedAttr("steps", b.getI64IntegerAttr(steps))}));
}

/// cond: skip_unless(steps = then + 1); then-steps; copies; skip(steps =
/// else); else-steps; copies. Both branches copy into the same result
/// buffers, so what follows reads one value whichever ran.
LogicalResult PlanLowering::lowerIf(graph::IfOp op) {
  auto bounds = op->getAttrOfType<ArrayAttr>("ingot.result_bounds");
  if (!bounds || bounds.size() != op.getNumResults())
    return op.emitOpError("has no ingot.result_bounds; run "
                          "ingot-compute-bounds first");
  SmallVector<Value> results;
  for (auto [result, bound] : llvm::zip(op.getResults(), bounds))
    results.push_back(alloc(op.getLoc(), result,
                            cast<DenseI64ArrayAttr>(bound).asArrayRef()));
  std::string origin = originOf(op);
  plan::KernelOp unless = control(op.getLoc(), "skip_unless",
                                  map.lookup(op.getCondition()), origin);
  plan::KernelOp skip;
  for (unsigned r = 0; r < 2; ++r) {
    Region &region = r == 0 ? op.getThenRegion() : op.getElseRegion();
    if (failed(lowerBlock(region.front())))
      return failure();
    for (auto [value, out] : llvm::zip(op.yieldOf(r).getValues(), results))
      plan::KernelOp::create(b, op.getLoc(), b.getStringAttr("copy"),
                             ValueRange{map.lookup(value)}, ValueRange{out},
                             b.getDictionaryAttr({}), b.getStringAttr(origin));
    if (r == 0) {
      setSteps(unless, stepsAfter(unless) + 1);
      skip = control(op.getLoc(), "skip", {}, origin);
    }
  }
  setSteps(skip, stepsAfter(skip));
  for (auto [result, out] : llvm::zip(op.getResults(), results))
    map.map(result, out);
  return success();
}

/// A `fail` step; its results are buffers sized at run time that no step
/// writes (the run stops at `fail` first), so the copies after it type-check.
LogicalResult PlanLowering::lowerFail(graph::FailOp op) {
  op->emitWarning("an If branch cannot run at the compiled shapes (")
      << op.getMessage() << "); runs that take it will fail";
  for (Value result : op.getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> unknown(type.getRank(), ShapedType::kDynamic);
    map.map(
        result,
        plan::AllocOp::create(
            b, op.getLoc(), MemRefType::get(unknown, type.getElementType()),
            b.getDenseI64ArrayAttr(SmallVector<int64_t>(type.getRank(), -1)),
            IntegerAttr()));
  }
  plan::KernelOp::create(
      b, op.getLoc(), b.getStringAttr("fail"), ValueRange(), ValueRange(),
      b.getDictionaryAttr({b.getNamedAttr("message", op.getMessageAttr())}),
      b.getStringAttr(originOf(op)));
  return success();
}

LogicalResult lowerFunction(func::FuncOp graph) {
  MLIRContext *ctx = graph.getContext();
  OpBuilder b(graph);
  SmallVector<Type> argTypes, resultTypes;
  for (Type t : graph.getArgumentTypes())
    argTypes.push_back(toMemRef(t));
  for (Type t : graph.getResultTypes())
    resultTypes.push_back(toMemRef(t));
  auto planFunc =
      func::FuncOp::create(b, graph.getLoc(), graph.getName(),
                           b.getFunctionType(argTypes, resultTypes));
  for (unsigned i = 0; i < graph.getNumArguments(); ++i)
    planFunc.setArgAttrs(i, renameAttrs(graph.getArgAttrDict(i), ctx));
  for (unsigned i = 0; i < graph.getNumResults(); ++i)
    planFunc.setResultAttrs(i, renameAttrs(graph.getResultAttrDict(i), ctx));
  if (auto symbols = graph->getAttrOfType<DictionaryAttr>("ingot.symbols"))
    planFunc->setAttr("plan.symbols", symbols);

  Block *body = planFunc.addEntryBlock();
  b.setInsertionPointToStart(body);
  PlanLowering lowering(planFunc, b);
  for (auto [from, to] : llvm::zip(graph.getArguments(), body->getArguments()))
    lowering.map.map(from, to);
  if (failed(lowering.lowerBlock(graph.getBody().front())))
    return failure();
  graph.erase();
  return success();
}

struct LowerToPlanPass : public ingot::impl::LowerToPlanBase<LowerToPlanPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp f : funcs)
      if (!f.isExternal() && failed(lowerFunction(f)))
        return signalPassFailure();
  }
};

} // namespace
