//===- OnnxRecurrent.cpp - LSTM and GRU -----------------------------------===//
//
// LSTM and GRU with the default activations (sigmoid, tanh, tanh for
// LSTM; sigmoid, tanh for GRU), forward, reverse or bidirectional, with
// optional bias and initial state (GRU: either linear_before_reset).
// One used output (Y, Y_h or Y_c) becomes an ingot.lstm / ingot.gru
// selecting it; several, one op computing all of them and slices of it.
// Layout 1 (batch first) transposes X and the initial states in and the
// outputs out. Refused, naming what is supported:
// sequence_lens, peepholes, clip, input_forget and other activations.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Fails naming the first LSTM or GRU feature ingot does not compute;
/// `activations` is what each direction's list must be.
LogicalResult refuseUnsupported(NodeContext &n,
                                ArrayRef<const char *> activations) {
  if (n.hasInput(4))
    return n.fail("sequence_lens", "every sequence the full length");
  if (n.opType() == "LSTM" && n.hasInput(7))
    return n.fail("peephole weights P", "an LSTM without peepholes");
  if (n.attr("clip", onnx::AttributeProto::FLOAT))
    return n.fail("clip", "no cell clipping");
  if (n.opType() == "LSTM" && n.attrInt("input_forget", 0) != 0)
    return n.fail("input_forget = 1", "input_forget = 0");
  if (int64_t layout = n.opset() >= 14 ? n.attrInt("layout", 0) : 0;
      layout != 0 && layout != 1)
    return n.fail("layout = " + std::to_string(layout), "layout 0 or 1");
  if (const auto *a = n.attr("activations", onnx::AttributeProto::STRINGS)) {
    for (int i = 0; i < a->strings_size(); ++i) {
      const char *want = activations[size_t(i) % activations.size()];
      if (a->strings(i) != want)
        return n.fail("activation '" + a->strings(i) + "'",
                      activations.size() == 3 ? "Sigmoid, Tanh, Tanh"
                                              : "Sigmoid, Tanh");
    }
  }
  return failure(n.ctx.hasError());
}

/// direction and hidden_size (from R's last dim when absent), checked.
LogicalResult recurrentAttrs(NodeContext &n, Value r, std::string &direction,
                             int64_t &hidden) {
  direction = "forward";
  if (const auto *a = n.attr("direction", onnx::AttributeProto::STRING))
    direction = a->s();
  auto rt = cast<RankedTensorType>(r.getType());
  hidden = n.attrInt("hidden_size", rt.getRank() == 3 ? rt.getDimSize(2) : -1);
  if (n.ctx.hasError())
    return failure();
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return n.fail("direction '" + direction + "'",
                  "forward, reverse, bidirectional");
  if (hidden < 1)
    return n.fail("no static hidden_size", "hidden_size or a static R");
  return success();
}

/// Layout 1 (opset 14+): X [batch, seq, input] and the initial states
/// [batch, dirs, hidden]; the ops take them sequence (or direction) first.
bool batchFirst(NodeContext &n) {
  return n.opset() >= 14 && n.attrInt("layout", 0) == 1;
}

/// `v` transposed by `perm` (null stays null).
FailureOr<Value> transposed(NodeContext &n, Value v, ArrayRef<int64_t> perm) {
  if (!v)
    return v;
  return n.build<graph::TransposeOp>(elementTypeOf(v), v,
                                     n.builder().getDenseI64ArrayAttr(perm));
}

/// Swaps dims 0 and 1 of X and of the initial states for layout 1.
LogicalResult toSequenceFirst(NodeContext &n, ArrayRef<Value *> values) {
  if (!batchFirst(n))
    return success();
  for (Value *v : values) {
    FailureOr<Value> t = transposed(n, *v, {1, 0, 2});
    if (failed(t))
      return failure();
    *v = *t;
  }
  return success();
}

/// Output `select` of the op in the node's layout: Y [seq, dirs, batch,
/// hidden] becomes [batch, seq, dirs, hidden] and Y_h / Y_c [dirs, batch,
/// hidden] become [batch, dirs, hidden] for layout 1.
FailureOr<Value> inLayout(NodeContext &n, FailureOr<Value> y, int select) {
  if (failed(y) || !batchFirst(n))
    return y;
  return select == 0 ? transposed(n, *y, {2, 0, 1, 3})
                     : transposed(n, *y, {1, 0, 2});
}

/// Sets the node's used outputs (of `count`: Y, then the states) from ops
/// `build(select)` makes. One used output gets the op selecting it; more
/// get one op selecting all of them stacked along dim 0 (select = count)
/// and slices of it, so the recurrence runs once per node, not per output.
LogicalResult setOutputs(NodeContext &n, int64_t count,
                         llvm::function_ref<FailureOr<Value>(int64_t)> build) {
  SmallVector<int64_t> used;
  for (int64_t i = 0; i < count; ++i)
    if (i < n.node.output_size() && !n.node.output(int(i)).empty())
      used.push_back(i);
  if (used.size() == 1)
    return n.setOutput(int(used[0]), inLayout(n, build(used[0]), int(used[0])));
  FailureOr<Value> all = build(count);
  if (failed(all))
    return failure();
  OpBuilder &b = n.builder();
  for (int64_t i : used) {
    FailureOr<Value> part;
    if (i == 0) // Y: every row but the states' count - 1
      part = n.build<graph::SliceOp>(n.f32(), *all, tensorI64Constant(n, {0}),
                                     tensorI64Constant(n, {1 - count}),
                                     tensorI64Constant(n, {0}),
                                     tensorI64Constant(n, {1}));
    else // state i: row i - count from the end
      part = n.build<graph::GatherOp>(
          n.f32(), *all, scalarConstant(n, n.i64(), double(i - count)),
          b.getI64IntegerAttr(0));
    if (failed(n.setOutput(int(i), inLayout(n, part, int(i)))))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult convertLstm(NodeContext &n) {
  Value x, w, r, b, h0, c0;
  std::string direction;
  int64_t hidden;
  if (failed(n.input(0, x)) || failed(n.input(1, w)) || failed(n.input(2, r)) ||
      failed(n.optionalInput(3, b)) || failed(n.optionalInput(5, h0)) ||
      failed(n.optionalInput(6, c0)) ||
      failed(n.requireType(x, "X", {n.f32()})) ||
      failed(refuseUnsupported(n, {"Sigmoid", "Tanh", "Tanh"})) ||
      failed(recurrentAttrs(n, r, direction, hidden)) ||
      failed(toSequenceFirst(n, {&x, &h0, &c0})))
    return failure();
  OpBuilder &builder = n.builder();
  return setOutputs(n, 3, [&](int64_t select) {
    return n.build<graph::LstmOp>(
        n.f32(), x, w, r, b, h0, c0, builder.getI64IntegerAttr(hidden),
        builder.getStringAttr(direction), builder.getI64IntegerAttr(select));
  });
}

LogicalResult convertGru(NodeContext &n) {
  Value x, w, r, b, h0;
  std::string direction;
  int64_t hidden;
  if (failed(n.input(0, x)) || failed(n.input(1, w)) || failed(n.input(2, r)) ||
      failed(n.optionalInput(3, b)) || failed(n.optionalInput(5, h0)) ||
      failed(n.requireType(x, "X", {n.f32()})) ||
      failed(refuseUnsupported(n, {"Sigmoid", "Tanh"})) ||
      failed(recurrentAttrs(n, r, direction, hidden)) ||
      failed(toSequenceFirst(n, {&x, &h0})))
    return failure();
  int64_t linearBeforeReset = n.attrInt("linear_before_reset", 0);
  if (n.ctx.hasError())
    return failure();
  OpBuilder &builder = n.builder();
  return setOutputs(n, 2, [&](int64_t select) {
    return n.build<graph::GruOp>(
        n.f32(), x, w, r, b, h0, builder.getI64IntegerAttr(hidden),
        builder.getStringAttr(direction),
        builder.getI64IntegerAttr(linearBeforeReset != 0),
        builder.getI64IntegerAttr(select));
  });
}

} // namespace ingot::compiler::onnximport
