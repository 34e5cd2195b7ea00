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

LogicalResult lowerFunction(func::FuncOp graph) {
  MLIRContext *ctx = graph.getContext();
  OpBuilder b(graph);
  SmallVector<Type> argTypes, resultTypes;
  for (Type t : graph.getArgumentTypes())
    argTypes.push_back(toMemRef(t));
  for (Type t : graph.getResultTypes())
    resultTypes.push_back(toMemRef(t));
  auto planFunc = func::FuncOp::create(b,
      graph.getLoc(), graph.getName(), b.getFunctionType(argTypes, resultTypes));
  for (unsigned i = 0; i < graph.getNumArguments(); ++i)
    planFunc.setArgAttrs(i, renameAttrs(graph.getArgAttrDict(i), ctx));
  for (unsigned i = 0; i < graph.getNumResults(); ++i)
    planFunc.setResultAttrs(i, renameAttrs(graph.getResultAttrDict(i), ctx));
  if (auto symbols = graph->getAttrOfType<DictionaryAttr>("ingot.symbols"))
    planFunc->setAttr("plan.symbols", symbols);

  Block *body = planFunc.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping map;
  for (auto [from, to] : llvm::zip(graph.getArguments(), body->getArguments()))
    map.map(from, to);
  Value none;

  for (Operation &op : graph.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Value> outs;
      for (Value v : ret.getOperands())
        outs.push_back(map.lookup(v));
      func::ReturnOp::create(b, ret.getLoc(), outs);
      continue;
    }
    if (auto param = dyn_cast<graph::ParamOp>(op)) {
      map.map(param.getResult(),
              plan::ParamOp::create(b, param.getLoc(), toMemRef(param.getType()),
                                    param.getNameAttr(), param.getPartsAttr(),
                                    param.getConcatAxisAttr(),
                                    param.getLayoutAttr(),
                                    quantFormatOf(param),
                                    quantGroupOf(param)));
      continue;
    }
    if (auto constant = dyn_cast<graph::ConstantOp>(op)) {
      map.map(constant.getResult(),
              plan::ConstantOp::create(b, constant.getLoc(),
                                         toMemRef(constant.getType()),
                                         constant.getValue()));
      continue;
    }
    if (op.getDialect() != ctx->getLoadedDialect<graph::IngotDialect>() ||
        op.getNumResults() == 0)
      return op.emitOpError("cannot be lowered to a plan step");

    // One arena buffer per result; fused ops' results share one bound.
    auto bound = op.getAttrOfType<DenseI64ArrayAttr>("ingot.max_shape");
    SmallVector<Value> outs;
    for (Value result : op.getResults()) {
      auto resultType = cast<RankedTensorType>(result.getType());
      SmallVector<int64_t> maxShape(resultType.getShape());
      if (!resultType.hasStaticShape()) {
        if (!bound)
          return op.emitOpError("has a dynamic result but no ingot.max_shape; "
                                "run ingot-compute-bounds first");
        maxShape.assign(bound.asArrayRef().begin(), bound.asArrayRef().end());
      }
      outs.push_back(plan::AllocOp::create(b, op.getLoc(),
                                           toMemRef(resultType),
                                           b.getDenseI64ArrayAttr(maxShape),
                                           IntegerAttr()));
    }

    StringRef kernel = op.getName().stripDialect();
    // Operands keep their positions: an absent optional before a present
    // one (operandSegmentSizes) becomes plan.none; absent ones at the end
    // are left off, as kernels read them as absent either way.
    SmallVector<Value> ins;
    auto segments =
        op.getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes");
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
    if (failed(checkAgainstTable(&op, kernel, ins.size(), outs.size())))
      return failure();
    SmallVector<NamedAttribute> args;
    for (NamedAttribute a : op.getAttrs())
      if (!a.getName().getValue().starts_with("ingot.") &&
          a.getName().getValue() != "operandSegmentSizes")
        args.push_back(a);
    plan::KernelOp::create(b, op.getLoc(), b.getStringAttr(kernel), ins,
                             outs, b.getDictionaryAttr(args),
                             b.getStringAttr(originOf(&op)));
    for (auto [result, out] : llvm::zip(op.getResults(), outs))
      map.map(result, out);
  }
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
