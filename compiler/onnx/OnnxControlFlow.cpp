//===- OnnxControlFlow.cpp - ONNX If --------------------------------------===//
//
// An If whose condition the importer can evaluate (shape arithmetic, a
// constant) becomes its branch, converted in place: exporters guard
// squeezes and state resets with such Ifs. Otherwise both branches are
// converted into the regions of `ingot.if` and the plan runs one of them.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Converts `g` in a scope of its own, so its names do not outlive it.
LogicalResult convertBranch(NodeContext &n, const onnx::GraphProto &g,
                            SmallVectorImpl<Value> &outputs) {
  n.ctx.pushScope();
  LogicalResult converted = n.ctx.convertSubgraph(g, outputs);
  n.ctx.popScope();
  if (failed(converted))
    return failure();
  if (int(outputs.size()) != n.node.output_size())
    return n.fail("its " + std::string(g.name()) + " branch has " +
                  std::to_string(outputs.size()) + " outputs for the node's " +
                  std::to_string(n.node.output_size()));
  return success();
}

/// The type both branches' values fit: dims they disagree on are dynamic.
FailureOr<Type> joinBranchTypes(NodeContext &n, int i, Value a, Value b) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getElementType() != tb.getElementType() ||
      ta.getRank() != tb.getRank())
    return n.fail("output " + std::to_string(i) + " is " +
                      typeName(ta.getElementType()) + " of rank " +
                      std::to_string(ta.getRank()) + " in then_branch but " +
                      typeName(tb.getElementType()) + " of rank " +
                      std::to_string(tb.getRank()) + " in else_branch",
                  "branches that agree on each output's dtype and rank, "
                  "or a condition known at compile time (pin the input "
                  "shapes it depends on with --shape)");
  SmallVector<int64_t> dims;
  for (auto [x, y] : llvm::zip(ta.getShape(), tb.getShape()))
    dims.push_back(x == y ? x : ShapedType::kDynamic);
  return Type(RankedTensorType::get(dims, ta.getElementType()));
}

/// Converts a branch into `region`'s block, ending in ingot.yield.
LogicalResult convertIntoRegion(NodeContext &n, const onnx::GraphProto &g,
                                Region &region,
                                SmallVectorImpl<Value> &outputs) {
  OpBuilder &b = n.builder();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.createBlock(&region));
  if (failed(convertBranch(n, g, outputs)))
    return failure();
  graph::YieldOp::create(b, n.loc(), outputs);
  return success();
}

/// Empties `region` and makes it yield the results of an ingot.fail
/// carrying `error`, typed like the other branch's `like`.
void replaceByFail(NodeContext &n, Region &region, const std::string &error,
                   ArrayRef<Value> like, SmallVectorImpl<Value> &outputs) {
  n.ctx.forgetValuesIn(region);
  region.getBlocks().clear();
  OpBuilder &b = n.builder();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.createBlock(&region));
  auto fail = graph::FailOp::create(b, n.loc(), ValueRange(like).getTypes(),
                                    b.getStringAttr(error));
  outputs.assign(fail.getResults().begin(), fail.getResults().end());
  graph::YieldOp::create(b, n.loc(), outputs);
}

} // namespace

LogicalResult convertIf(NodeContext &n) {
  Value cond;
  if (failed(n.input(0, cond)) ||
      failed(n.requireType(cond, "the condition", {n.i1()})))
    return failure();
  const onnx::AttributeProto *thenAttr =
      n.attr("then_branch", onnx::AttributeProto::GRAPH);
  const onnx::AttributeProto *elseAttr =
      n.attr("else_branch", onnx::AttributeProto::GRAPH);
  if (n.ctx.hasError())
    return failure();
  if (!thenAttr || !elseAttr)
    return n.fail("a branch is missing", "then_branch and else_branch graphs");
  auto condType = cast<RankedTensorType>(cond.getType());
  if (condType.hasStaticShape() && condType.getNumElements() != 1)
    return n.fail("the condition has " +
                      std::to_string(condType.getNumElements()) + " elements",
                  "a one-element condition");

  if (std::optional<std::vector<int64_t>> known = n.ctx.constantInts(cond);
      known && known->size() == 1) {
    SmallVector<Value> outputs;
    if (failed(convertBranch(n, (*known)[0] ? thenAttr->g() : elseAttr->g(),
                             outputs)))
      return failure();
    for (auto [i, v] : llvm::enumerate(outputs))
      if (failed(n.setOutput(int(i), v)))
        return failure();
    return success();
  }
  if (!condType.hasStaticShape())
    return n.fail("the condition's size is only known at run time",
                  "a condition of static shape with one element");

  // The branches are converted inside a result-less shell (regions
  // attached to the function, so nested ops verify with dominance), then
  // moved to the op with the joined result types.
  auto shell = graph::IfOp::create(n.builder(), n.loc(), TypeRange(), cond);
  Region &thenRegion = shell.getThenRegion(),
         &elseRegion = shell.getElseRegion();
  SmallVector<Value> thenOut, elseOut;
  std::string thenError, elseError;
  if (failed(convertIntoRegion(n, thenAttr->g(), thenRegion, thenOut)))
    thenError = n.ctx.takeError();
  if (failed(convertIntoRegion(n, elseAttr->g(), elseRegion, elseOut)))
    elseError = n.ctx.takeError();
  if (!thenError.empty() && !elseError.empty()) {
    n.ctx.forgetValuesIn(thenRegion);
    n.ctx.forgetValuesIn(elseRegion);
    shell->erase();
    return n.ctx.fail(thenError);
  }
  // One branch cannot run at these shapes: taking it fails the run.
  if (!thenError.empty())
    replaceByFail(n, thenRegion, thenError, elseOut, thenOut);
  else if (!elseError.empty())
    replaceByFail(n, elseRegion, elseError, thenOut, elseOut);
  SmallVector<Type> types;
  for (size_t i = 0; i < thenOut.size(); ++i) {
    FailureOr<Type> t = joinBranchTypes(n, int(i), thenOut[i], elseOut[i]);
    if (failed(t)) {
      n.ctx.forgetValuesIn(thenRegion);
      n.ctx.forgetValuesIn(elseRegion);
      shell->erase();
      return failure();
    }
    types.push_back(*t);
  }
  auto op = graph::IfOp::create(n.builder(), n.loc(), types, cond);
  op.getThenRegion().takeBody(thenRegion);
  op.getElseRegion().takeBody(elseRegion);
  shell->erase();
  if (failed(mlir::verify(op))) {
    std::string diagnostic = n.ctx.takeDiagnostic();
    n.ctx.forgetValuesIn(op.getThenRegion());
    n.ctx.forgetValuesIn(op.getElseRegion());
    op->erase();
    return n.fail(diagnostic.empty() ? "invalid branches" : diagnostic);
  }
  for (auto [i, v] : llvm::enumerate(op.getResults()))
    if (failed(n.setOutput(int(i), v)))
      return failure();
  return success();
}

} // namespace ingot::compiler::onnximport
