//===- OnnxRecurrent.cpp - LSTM -------------------------------------------===//
//
// LSTM with layout 0 and the default activations (sigmoid, tanh, tanh),
// forward, reverse or bidirectional, with optional bias and initial state.
// Each used output (Y, Y_h, Y_c) becomes one ingot.lstm selecting it.
// Refused, naming what is supported: sequence_lens, peepholes, clip,
// input_forget, other activations and layout 1 (batch first).
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxTensorOps.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Fails naming the first LSTM feature ingot does not compute.
LogicalResult refuseUnsupported(NodeContext &n) {
  if (n.hasInput(4))
    return n.fail("sequence_lens", "every sequence the full length");
  if (n.hasInput(7))
    return n.fail("peephole weights P", "an LSTM without peepholes");
  if (n.attr("clip", onnx::AttributeProto::FLOAT))
    return n.fail("clip", "no cell clipping");
  if (n.attrInt("input_forget", 0) != 0)
    return n.fail("input_forget = 1", "input_forget = 0");
  if (n.opset() >= 14 && n.attrInt("layout", 0) != 0)
    return n.fail("layout = 1 (batch first)", "layout = 0");
  if (const auto *a = n.attr("activations", onnx::AttributeProto::STRINGS)) {
    for (int i = 0; i < a->strings_size(); ++i) {
      const char *want = i % 3 == 0 ? "Sigmoid" : "Tanh";
      if (a->strings(i) != want)
        return n.fail("activation '" + a->strings(i) + "'",
                      "Sigmoid, Tanh, Tanh");
    }
  }
  return failure(n.ctx.hasError());
}

} // namespace

LogicalResult convertLstm(NodeContext &n) {
  Value x, w, r, b, h0, c0;
  if (failed(n.input(0, x)) || failed(n.input(1, w)) || failed(n.input(2, r)) ||
      failed(n.optionalInput(3, b)) || failed(n.optionalInput(5, h0)) ||
      failed(n.optionalInput(6, c0)) ||
      failed(n.requireType(x, "X", {n.f32()})) || failed(refuseUnsupported(n)))
    return failure();
  std::string direction = "forward";
  if (const auto *a = n.attr("direction", onnx::AttributeProto::STRING))
    direction = a->s();
  auto rt = cast<RankedTensorType>(r.getType());
  int64_t hidden = rt.getRank() == 3 ? rt.getDimSize(2) : -1;
  hidden = n.attrInt("hidden_size", hidden);
  if (n.ctx.hasError())
    return failure();
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return n.fail("direction '" + direction + "'",
                  "forward, reverse, bidirectional");
  if (hidden < 1)
    return n.fail("no static hidden_size", "hidden_size or a static R");
  OpBuilder &builder = n.builder();
  for (int select = 0; select < 3; ++select) {
    if (select >= n.node.output_size() || n.node.output(select).empty())
      continue;
    if (failed(n.setOutput(
            select, n.build<graph::LstmOp>(n.f32(), x, w, r, b, h0, c0,
                                           builder.getI64IntegerAttr(hidden),
                                           builder.getStringAttr(direction),
                                           builder.getI64IntegerAttr(select)))))
      return failure();
  }
  return success();
}

} // namespace ingot::compiler::onnximport
