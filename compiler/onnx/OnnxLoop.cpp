//===- OnnxLoop.cpp - ONNX Loop and Scan, unrolled ------------------------===//
//
// A Loop whose trip count and condition the importer can evaluate (a
// constant, or shape arithmetic at pinned shapes: a scripted loop over
// x.shape[1]), and a Scan over a dim of static length, are unrolled: the
// body is converted once per iteration with its inputs bound to that
// iteration's values, and scan outputs are stacked. The plan stays a
// straight list of steps. A loop whose iteration count is only known at
// run time is refused, naming what to pin.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Unrolled nodes (iterations x body nodes) above which a loop is refused:
/// past this the plan's size, not the loop, dominates compile time.
constexpr int64_t kMaxUnrolledNodes = 20000;

/// Converts `body` once with its declared inputs bound to `inputs`, in a
/// scope of its own.
LogicalResult runBody(NodeContext &n, const onnx::GraphProto &body,
                      ArrayRef<Value> inputs, SmallVectorImpl<Value> &outs) {
  if (body.input_size() != int(inputs.size()))
    return n.fail("its body declares " + std::to_string(body.input_size()) +
                      " inputs for " + std::to_string(inputs.size()) +
                      " values",
                  "a body with one input per value the node binds");
  n.ctx.pushScope();
  for (auto [decl, v] : llvm::zip(body.input(), inputs))
    n.ctx.define(decl.name(), v);
  LogicalResult converted = n.ctx.convertSubgraph(body, outs);
  n.ctx.popScope();
  return converted;
}

/// The one value of `v` if the importer knows it.
std::optional<int64_t> knownScalar(NodeContext &n, Value v) {
  std::optional<std::vector<int64_t>> known = n.ctx.constantInts(v);
  if (!known || known->size() != 1)
    return std::nullopt;
  return known->front();
}

/// Stacks one value per iteration along a new `axis`.
FailureOr<Value> stack(NodeContext &n, ArrayRef<Value> parts, int64_t axis) {
  OpBuilder &b = n.builder();
  SmallVector<Value> expanded;
  for (Value p : parts) {
    FailureOr<Value> u = n.build<graph::UnsqueezeOp>(
        elementTypeOf(p), p, b.getDenseI64ArrayAttr({axis}));
    if (failed(u))
      return failure();
    expanded.push_back(*u);
  }
  return n.build<graph::ConcatOp>(elementTypeOf(parts.front()), expanded,
                                  b.getI64IntegerAttr(axis));
}

const onnx::GraphProto *bodyOf(NodeContext &n) {
  const onnx::AttributeProto *a = n.attr("body", onnx::AttributeProto::GRAPH);
  if (!a && !n.ctx.hasError())
    (void)n.fail("the body graph is missing");
  return a ? &a->g() : nullptr;
}

/// Binds the node's scan outputs from `perIteration` (one list per scan
/// output), each stacked along its axis; `first` is its first output.
LogicalResult bindScanOutputs(NodeContext &n, int first,
                              std::vector<SmallVector<Value>> &perIteration,
                              ArrayRef<int64_t> axes) {
  for (auto [k, parts] : llvm::enumerate(perIteration)) {
    if (parts.empty()) {
      if (failed(n.requireUnused(first + int(k), "a scan output of a loop "
                                                 "that runs no iteration")))
        return failure();
      continue;
    }
    const int64_t rank =
        int64_t(cast<RankedTensorType>(parts.front().getType()).getRank() + 1);
    const int64_t axis = axes.empty() ? 0 : axes[k];
    if (axis < -rank || axis >= rank)
      return n.fail("scan output axis " + std::to_string(axis) +
                    " is out of range for rank " + std::to_string(rank));
    if (failed(
            n.setOutput(first + int(k), stack(n, parts, (axis + rank) % rank))))
      return failure();
  }
  return success();
}

} // namespace

/// Loop(M, cond, v...): iteration i binds (i, cond, v...) to the body,
/// whose outputs are (cond', v'..., scan values...).
LogicalResult convertLoop(NodeContext &n) {
  const onnx::GraphProto *body = bodyOf(n);
  Value trip, cond;
  if (!body || failed(n.optionalInput(0, trip)) ||
      failed(n.optionalInput(1, cond)))
    return failure();
  std::optional<int64_t> maxTrips, keepGoing = 1;
  if (trip && !(maxTrips = knownScalar(n, trip)))
    return n.fail("a trip count only known at run time",
                  "a trip count known at compile time (pin the input shapes "
                  "it depends on with --shape); the loop is unrolled");
  if (cond && !(keepGoing = knownScalar(n, cond)))
    return n.fail("a loop condition only known at run time",
                  "a condition known at compile time in every iteration");
  SmallVector<Value> carried;
  for (int i = 2; i < n.node.input_size(); ++i) {
    Value v;
    if (failed(n.input(i, v)))
      return failure();
    carried.push_back(v);
  }
  const int scans = body->output_size() - 1 - int(carried.size());
  if (scans < 0)
    return n.fail("its body has " + std::to_string(body->output_size()) +
                  " outputs for " + std::to_string(carried.size()) +
                  " loop-carried values and the condition");
  std::vector<SmallVector<Value>> scanParts(static_cast<size_t>(scans));
  const int64_t perIteration = std::max(1, body->node_size());
  for (int64_t i = 0; *keepGoing && (!maxTrips || i < *maxTrips); ++i) {
    if ((i + 1) * perIteration > kMaxUnrolledNodes)
      return n.fail("more than " + std::to_string(i) + " iterations of a " +
                        std::to_string(body->node_size()) + "-node body",
                    "loops of at most " + std::to_string(kMaxUnrolledNodes) +
                        " nodes unrolled");
    SmallVector<Value> ins = {scalarConstant(n, n.i64(), double(i)),
                              cond ? cond : scalarConstant(n, n.i1(), 1.0)};
    ins.append(carried);
    SmallVector<Value> outs;
    if (failed(runBody(n, *body, ins, outs)))
      return failure();
    cond = outs[0];
    if (!(keepGoing = knownScalar(n, cond)))
      return n.fail("a loop condition only known at run time (iteration " +
                        std::to_string(i) + ")",
                    "a condition known at compile time in every iteration");
    carried.assign(outs.begin() + 1, outs.begin() + 1 + carried.size());
    for (int k = 0; k < scans; ++k)
      scanParts[size_t(k)].push_back(outs[1 + carried.size() + size_t(k)]);
  }
  for (auto [i, v] : llvm::enumerate(carried))
    if (failed(n.setOutput(int(i), v)))
      return failure();
  return bindScanOutputs(n, int(carried.size()), scanParts, {});
}

/// Scan (9+): states and one slice of each scan input per iteration along
/// its axis (backwards when its direction is 1); scan outputs stacked.
LogicalResult convertScan(NodeContext &n) {
  const onnx::GraphProto *body = bodyOf(n);
  const int64_t numScan = n.attrInt("num_scan_inputs", -1);
  std::vector<int64_t> inAxes = n.attrInts("scan_input_axes"),
                       inDirs = n.attrInts("scan_input_directions"),
                       outAxes = n.attrInts("scan_output_axes"),
                       outDirs = n.attrInts("scan_output_directions");
  if (!body || n.ctx.hasError())
    return failure();
  const int numInputs = n.node.input_size();
  if (numScan < 1 || numScan > numInputs)
    return n.fail("num_scan_inputs " + std::to_string(numScan) + " for " +
                  std::to_string(numInputs) + " inputs");
  const int numStates = numInputs - int(numScan);
  SmallVector<Value> states, scanned;
  for (int i = 0; i < numInputs; ++i) {
    Value v;
    if (failed(n.input(i, v)))
      return failure();
    (i < numStates ? states : scanned).push_back(v);
  }
  inAxes.resize(size_t(numScan), 0);
  inDirs.resize(size_t(numScan), 0);
  int64_t length = -1;
  for (auto [k, v] : llvm::enumerate(scanned)) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t &axis = inAxes[k];
    if (axis < -t.getRank() || axis >= t.getRank())
      return n.fail("scan input axis " + std::to_string(axis) +
                    " is out of range for rank " + std::to_string(t.getRank()));
    axis = (axis + t.getRank()) % t.getRank();
    const int64_t d = t.getDimSize(axis);
    if (ShapedType::isDynamic(d))
      return n.fail("a scan axis of run-time length",
                    "a scan axis of static length (pin it with --shape); "
                    "the scan is unrolled");
    if (length >= 0 && d != length)
      return n.fail("scan inputs of lengths " + std::to_string(length) +
                    " and " + std::to_string(d));
    length = d;
  }
  const int scans = body->output_size() - numStates;
  if (scans < 0 || length * std::max(1, body->node_size()) > kMaxUnrolledNodes)
    return n.fail(
        scans < 0 ? "its body has fewer outputs than states"
                  : std::to_string(length) + " iterations of a " +
                        std::to_string(body->node_size()) + "-node body",
        "at most " + std::to_string(kMaxUnrolledNodes) + " nodes unrolled");
  outDirs.resize(size_t(scans), 0);
  std::vector<SmallVector<Value>> scanParts(static_cast<size_t>(scans));
  for (int64_t i = 0; i < length; ++i) {
    SmallVector<Value> ins(states);
    for (auto [k, v] : llvm::enumerate(scanned)) {
      const int64_t at = inDirs[k] ? length - 1 - i : i;
      FailureOr<Value> slice = n.build<graph::GatherOp>(
          elementTypeOf(v), v, scalarConstant(n, n.i64(), double(at)),
          n.builder().getI64IntegerAttr(inAxes[k]));
      if (failed(slice))
        return failure();
      ins.push_back(*slice);
    }
    SmallVector<Value> outs;
    if (failed(runBody(n, *body, ins, outs)))
      return failure();
    states.assign(outs.begin(), outs.begin() + numStates);
    for (int k = 0; k < scans; ++k)
      scanParts[size_t(k)].push_back(outs[size_t(numStates + k)]);
  }
  for (int k = 0; k < scans; ++k)
    if (outDirs[size_t(k)])
      std::reverse(scanParts[size_t(k)].begin(), scanParts[size_t(k)].end());
  for (auto [i, v] : llvm::enumerate(states))
    if (failed(n.setOutput(int(i), v)))
      return failure();
  return bindScanOutputs(n, numStates, scanParts, outAxes);
}

} // namespace ingot::compiler::onnximport
