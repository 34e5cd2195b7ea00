//===- OnnxQuantMicrosoft.cpp - onnxruntime's QLinear* contrib ops --------===//
//
// onnxruntime's static quantiser in QOperator format writes, besides the
// standard QLinearConv and QLinearMatMul, com.microsoft ops that compute a
// float op on dequantised 8-bit operands and quantise its result:
// QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
// QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat,
// QLinearWhere, QLinearSoftmax and QGemm. Each is expanded here into that very
// ONNX subgraph (DequantizeLinear per operand, the float op with the node's
// attributes, QuantizeLinear) and converted by the standard converters,
// so every attribute and dtype check is theirs. onnxruntime evaluates
// some of these with reordered float arithmetic (lookup tables, scale
// ratios), so a result may differ from it by one quantisation step where
// the exact value lies on a rounding boundary.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Where a QLinear op keeps its quantised operands: (x, scale, zero point)
/// triples from `firstOperand` on (`operands` of them, or all the rest
/// when -1), the output's scale and zero point at `yScale`, and an
/// unquantised leading input (Where's condition) when `condition`.
struct QLinearForm {
  const char *opType, *floatOp;
  int firstOperand, operands, yScale;
  bool condition;
};

constexpr QLinearForm kForms[] = {
    {"QLinearAdd", "Add", 0, 2, 6, false},
    {"QLinearMul", "Mul", 0, 2, 6, false},
    {"QLinearSigmoid", "Sigmoid", 0, 1, 3, false},
    {"QLinearLeakyRelu", "LeakyRelu", 0, 1, 3, false},
    {"QLinearGlobalAveragePool", "GlobalAveragePool", 0, 1, 3, false},
    {"QLinearAveragePool", "AveragePool", 0, 1, 3, false},
    {"QLinearConcat", "Concat", 2, -1, 0, false},
    {"QLinearWhere", "Where", 1, 2, 7, true},
    {"QLinearSoftmax", "Softmax", 0, 1, 3, false},
};

const QLinearForm *formOf(const std::string &opType) {
  for (const QLinearForm &f : kForms)
    if (opType == f.opType)
      return &f;
  return nullptr;
}

/// The subgraph under construction: node names derive from the outer
/// node's, value names are private to it.
struct Expansion {
  NodeContext &n;
  onnx::GraphProto graph;
  int counter = 0;

  std::string input(int i) const {
    return i < n.node.input_size() ? n.node.input(i) : std::string();
  }
  std::string fresh(const std::string &what) {
    return "__expanded/" + n.name() + "/" + what + std::to_string(counter++);
  }
  onnx::NodeProto &add(const char *opType,
                       std::initializer_list<std::string> ins) {
    onnx::NodeProto &node = *graph.add_node();
    node.set_op_type(opType);
    node.set_name(n.name() + "/" + opType);
    for (const std::string &in : ins)
      node.add_input(in);
    node.add_output(fresh(opType));
    return node;
  }
  void setIntAttr(onnx::NodeProto &node, const char *name, int64_t v) {
    onnx::AttributeProto &a = *node.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
  }
  /// DequantizeLinear of the triple at `i` (zero point optional).
  std::string dequantize(int i) {
    return add("DequantizeLinear", {input(i), input(i + 1), input(i + 2)})
        .output(0);
  }
  /// Converts the subgraph, whose last node's output is the result.
  LogicalResult finish(int output) {
    graph.set_name(n.name());
    graph.add_output()->set_name(graph.node(graph.node_size() - 1).output(0));
    SmallVector<Value> outs;
    n.ctx.pushScope();
    LogicalResult converted = n.ctx.convertSubgraph(graph, outs);
    n.ctx.popScope();
    if (failed(converted))
      return failure();
    return n.setOutput(output, outs.front());
  }
};

LogicalResult convertQLinearForm(NodeContext &n) {
  const QLinearForm &form = *formOf(n.opType());
  if (n.attrInt("channels_last", 0) != 0)
    return n.fail("channels_last = 1", "channels_last = 0 (NCHW)");
  // QLinearSoftmax names the Softmax semantics it follows (opset 13
  // changed them); the expansion's Softmax has the model's.
  if (n.attr("opset", onnx::AttributeProto::INT) &&
      (n.attrInt("opset", 13) >= 13) != (n.opset() >= 13))
    return n.fail("Softmax semantics of opset " +
                      std::to_string(n.attrInt("opset", 13)) +
                      " in a model of opset " + std::to_string(n.opset()),
                  "the model's own Softmax semantics");
  Expansion e{n, {}};
  std::vector<std::string> operands;
  if (form.condition)
    operands.push_back(e.input(0));
  if (!n.hasInput(form.yScale))
    return n.fail("no y_scale (input " + std::to_string(form.yScale) + ")",
                  "the quantised operands and the output's scale");
  const int end = form.operands < 0 ? n.node.input_size()
                                    : form.firstOperand + 3 * form.operands;
  for (int i = form.firstOperand; i < end; i += 3)
    operands.push_back(e.dequantize(i));
  onnx::NodeProto &op = *e.graph.add_node();
  op.set_op_type(form.floatOp);
  op.set_name(n.name() + "/" + form.floatOp);
  for (const std::string &in : operands)
    op.add_input(in);
  op.add_output(e.fresh(form.floatOp));
  for (const onnx::AttributeProto &a : n.node.attribute())
    if (a.name() != "channels_last" && a.name() != "opset")
      *op.add_attribute() = a;
  e.add("QuantizeLinear",
        {op.output(0), e.input(form.yScale), e.input(form.yScale + 1)});
  return e.finish(0);
}

/// QGemm: alpha · A' B' + C on dequantised A and B, the int32 bias C
/// scaled by a_scale · b_scale; quantised when y_scale is given, else the
/// float result.
LogicalResult convertQGemm(NodeContext &n) {
  Expansion e{n, {}};
  const std::string a = e.dequantize(0);
  onnx::NodeProto &dqB =
      e.add("DequantizeLinear", {e.input(3), e.input(4), e.input(5)});
  // A per-column b_scale lies along B's N dim: 0 when B is transposed.
  e.setIntAttr(dqB, "axis", n.attrInt("transB", 0) ? 0 : 1);
  onnx::NodeProto &gemm = *e.graph.add_node();
  gemm.set_op_type("Gemm");
  gemm.set_name(n.name() + "/Gemm");
  gemm.add_input(a);
  gemm.add_input(dqB.output(0));
  if (n.hasInput(6)) {
    std::string scale = e.add("Mul", {e.input(1), e.input(4)}).output(0);
    onnx::NodeProto &dqC = e.add("DequantizeLinear", {e.input(6), scale});
    e.setIntAttr(dqC, "axis", -1);
    gemm.add_input(dqC.output(0));
  }
  gemm.add_output(e.fresh("Gemm"));
  for (const onnx::AttributeProto &attr : n.node.attribute())
    *gemm.add_attribute() = attr;
  if (n.hasInput(7))
    e.add("QuantizeLinear", {gemm.output(0), e.input(7), e.input(8)});
  return e.finish(0);
}

} // namespace

llvm::ArrayRef<OpConverter> quantMicrosoftConverters() {
  static const std::vector<OpConverter> table = [] {
    std::vector<OpConverter> t;
    for (const QLinearForm &f : kForms)
      t.push_back(
          {f.opType, 10, kMaxOpset, convertQLinearForm, "com.microsoft"});
    t.push_back({"QGemm", 10, kMaxOpset, convertQGemm, "com.microsoft"});
    t.push_back(
        {"MatMulNBits", 10, kMaxOpset, convertMatMulNBits, "com.microsoft"});
    return t;
  }();
  return table;
}

} // namespace ingot::compiler::onnximport
