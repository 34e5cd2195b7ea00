//===- OnnxMathOps.cpp - Elementwise math converters and the math table --===//
//
// Elementwise math, logic and comparisons, Gelu, Clip and Dropout, plus the
// table of the whole math family (reductions, LogSoftmax and CumSum in
// OnnxMathReduce.cpp, normalisations in OnnxMathNorm.cpp, Einsum in
// OnnxMathEinsum.cpp). The families map onto a few `kind`-selected ingot
// ops (IngotMathOps.td); element types are checked against what the kernels
// implement (docs/kernels-math.md) so a mismatch is reported at the node.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"
#include "compiler/onnx/OnnxMathConverters.h"

#include <climits>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

FailureOr<Value> unaryMath(NodeContext &n, Value x, StringRef kind,
                           std::optional<float> alpha = std::nullopt,
                           std::optional<float> beta = std::nullopt) {
  OpBuilder &b = n.builder();
  return n.build<graph::UnaryMathOp>(
      elementTypeOf(x), x, b.getStringAttr(kind),
      alpha ? b.getF32FloatAttr(*alpha) : FloatAttr(),
      beta ? b.getF32FloatAttr(*beta) : FloatAttr());
}

template <const char *Kind, bool Ints = false>
LogicalResult convertUnaryKind(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) ||
      failed(n.requireType(x, "input X", numericTypes(n, Ints))))
    return failure();
  return n.setOutput(0, unaryMath(n, x, Kind));
}

constexpr char kReciprocal[] = "reciprocal", kLog[] = "log", kAbs[] = "abs",
               kSoftplus[] = "softplus", kMish[] = "mish", kSin[] = "sin",
               kCos[] = "cos", kFloor[] = "floor", kCeil[] = "ceil",
               kRound[] = "round", kSign[] = "sign";

/// HardSigmoid, LeakyRelu, Elu: f32 with the ONNX default alpha/beta.
LogicalResult convertParamUnary(NodeContext &n, StringRef kind, float alpha,
                                std::optional<float> beta) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input X", {n.f32()})))
    return failure();
  float a = n.attrFloat("alpha", alpha);
  std::optional<float> bta;
  if (beta)
    bta = n.attrFloat("beta", *beta);
  if (n.ctx.hasError())
    return failure();
  return n.setOutput(0, unaryMath(n, x, kind, a, bta));
}

LogicalResult convertHardSigmoid(NodeContext &n) {
  return convertParamUnary(n, "hard_sigmoid", 0.2f, 0.5f);
}
LogicalResult convertLeakyRelu(NodeContext &n) {
  return convertParamUnary(n, "leaky_relu", 0.01f, std::nullopt);
}
LogicalResult convertElu(NodeContext &n) {
  return convertParamUnary(n, "elu", 1.0f, std::nullopt);
}

LogicalResult convertNot(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input X", {n.i1()})))
    return failure();
  return n.setOutput(0, unaryMath(n, x, "not"));
}

/// Gelu (20): exact or tanh-approximated; reuses the decoder-LLM op.
LogicalResult convertGelu(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input X", {n.f32()})))
    return failure();
  std::string approximate = "none";
  if (const onnx::AttributeProto *a =
          n.attr("approximate", onnx::AttributeProto::STRING))
    approximate = a->s();
  if (n.ctx.hasError())
    return failure();
  if (approximate != "none" && approximate != "tanh")
    return n.fail("approximate = \"" + approximate + "\"",
                  "\"none\", \"tanh\"");
  return n.setOutput(0, n.build<graph::GeluOp>(
                            n.f32(), x, n.builder().getStringAttr(approximate)));
}

FailureOr<Value> binaryMath(NodeContext &n, Value a, Value b, StringRef kind) {
  return n.build<graph::BinaryMathOp>(elementTypeOf(a), a, b,
                                      n.builder().getStringAttr(kind));
}

/// Max/Min: variadic and broadcasting, as a left-to-right chain.
LogicalResult convertVariadic(NodeContext &n, StringRef kind) {
  if (n.node.input_size() < 1)
    return n.fail("needs at least one input");
  Value acc;
  if (failed(n.input(0, acc)) ||
      failed(n.requireType(acc, "input #0", numericTypes(n))))
    return failure();
  for (int i = 1; i < n.node.input_size(); ++i) {
    Value next;
    if (failed(n.input(i, next)) ||
        failed(n.requireType(next, "input (must match #0)",
                             {elementTypeOf(acc)})))
      return failure();
    FailureOr<Value> r = binaryMath(n, acc, next, kind);
    if (failed(r))
      return failure();
    acc = *r;
  }
  return n.setOutput(0, acc);
}

LogicalResult convertMax(NodeContext &n) { return convertVariadic(n, "max"); }
LogicalResult convertMin(NodeContext &n) { return convertVariadic(n, "min"); }

template <const char *Kind> LogicalResult convertLogic(NodeContext &n) {
  Value a, b;
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.requireType(a, "input A", {n.i1()})) ||
      failed(n.requireType(b, "input B", {n.i1()})))
    return failure();
  return n.setOutput(0, binaryMath(n, a, b, Kind));
}
constexpr char kAnd[] = "and", kOr[] = "or";

template <const char *Kind> LogicalResult convertCompare(NodeContext &n) {
  Value a, b;
  SmallVector<Type> allowed = numericTypes(n);
  if (StringRef(Kind) == "equal")
    allowed.push_back(n.i1());
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.requireType(a, "input A", allowed)) ||
      failed(n.requireType(b, "input B (must match A)", {elementTypeOf(a)})))
    return failure();
  return n.setOutput(0, n.build<graph::CompareOp>(
                            n.i1(), a, b, n.builder().getStringAttr(Kind)));
}
constexpr char kEqual[] = "equal", kLess[] = "less",
               kLessEqual[] = "less_equal", kGreater[] = "greater",
               kGreaterEqual[] = "greater_equal";

/// Clip (13+): optional min/max inputs (scalars); max(x, min) then
/// min(., max), the order onnxruntime applies them in.
LogicalResult convertClip(NodeContext &n) {
  Value x, lo, hi;
  if (failed(n.input(0, x)) ||
      failed(n.requireType(x, "input", numericTypes(n))))
    return failure();
  if (n.opset() < 11) { // min and max are float attributes
    if (failed(n.requireType(x, "input", {n.f32()})))
      return failure();
    if (n.attr("min", onnx::AttributeProto::FLOAT))
      lo = scalarConstant(n, n.f32(), n.attrFloat("min", 0.0f));
    if (n.attr("max", onnx::AttributeProto::FLOAT))
      hi = scalarConstant(n, n.f32(), n.attrFloat("max", 0.0f));
    if (n.ctx.hasError())
      return failure();
  } else if (failed(n.optionalInput(1, lo)) || failed(n.optionalInput(2, hi))) {
    return failure();
  }
  for (Value bound : {lo, hi})
    if (bound && (failed(n.requireType(bound, "min/max (must match input)",
                                       {elementTypeOf(x)}))))
      return failure();
  Value acc = x;
  if (lo) {
    FailureOr<Value> r = binaryMath(n, acc, lo, "max");
    if (failed(r))
      return failure();
    acc = *r;
  }
  if (hi) {
    FailureOr<Value> r = binaryMath(n, acc, hi, "min");
    if (failed(r))
      return failure();
    acc = *r;
  }
  return n.setOutput(0, acc);
}

/// Dropout at inference: the data passes through; a requested mask is all
/// true. training_mode must be absent or a constant false.
LogicalResult convertDropout(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)))
    return failure();
  if (n.hasInput(2)) {
    Value mode;
    if (failed(n.input(2, mode)))
      return failure();
    std::optional<std::vector<int64_t>> v = n.ctx.constantInts(mode);
    if (!v || v->size() != 1 || (*v)[0] != 0)
      return n.fail("training_mode that is not a constant false",
                    "inference only (training_mode absent or false)");
  }
  if (failed(n.setOutput(0, x)))
    return failure();
  if (n.node.output_size() < 2 || n.node.output(1).empty())
    return success();
  // Before opset 10 the mask has the input's type and no defined value at
  // inference (onnxruntime writes zeros, the ONNX reference ones).
  if (n.opset() < 10)
    return n.requireUnused(1, "mask (undefined at inference before opset 10)");
  OpBuilder &b = n.builder();
  FailureOr<Value> shape = n.build<graph::ShapeOp>(
      n.i64(), x, b.getI64IntegerAttr(0), b.getI64IntegerAttr(INT64_MAX));
  if (failed(shape))
    return failure();
  return n.setOutput(1, n.build<graph::ConstantOfShapeOp>(
                            n.i1(), *shape, b.getF64FloatAttr(1.0)));
}

const OpConverter kMathConverters[] = {
    {"Gelu", 20, kMaxOpset, convertGelu},
    {"Reciprocal", kMinOpset, kMaxOpset, convertUnaryKind<kReciprocal>},
    {"Log", kMinOpset, kMaxOpset, convertUnaryKind<kLog>},
    {"Abs", kMinOpset, kMaxOpset, convertUnaryKind<kAbs, true>},
    {"Softplus", kMinOpset, kMaxOpset, convertUnaryKind<kSoftplus>},
    {"Mish", 18, kMaxOpset, convertUnaryKind<kMish>},
    {"Sin", kMinOpset, kMaxOpset, convertUnaryKind<kSin>},
    {"Cos", kMinOpset, kMaxOpset, convertUnaryKind<kCos>},
    {"Floor", kMinOpset, kMaxOpset, convertUnaryKind<kFloor>},
    {"Ceil", kMinOpset, kMaxOpset, convertUnaryKind<kCeil>},
    {"Round", 11, kMaxOpset, convertUnaryKind<kRound>},
    {"Sign", 9, kMaxOpset, convertUnaryKind<kSign, true>},
    {"HardSigmoid", kMinOpset, kMaxOpset, convertHardSigmoid},
    {"LeakyRelu", kMinOpset, kMaxOpset, convertLeakyRelu},
    {"Elu", kMinOpset, kMaxOpset, convertElu},
    {"Not", kMinOpset, kMaxOpset, convertNot},
    {"And", kMinOpset, kMaxOpset, convertLogic<kAnd>},
    {"Or", kMinOpset, kMaxOpset, convertLogic<kOr>},
    {"Max", kMinOpset, kMaxOpset, convertMax},
    {"Min", kMinOpset, kMaxOpset, convertMin},
    {"Clip", kMinOpset, kMaxOpset, convertClip},
    {"Equal", kMinOpset, kMaxOpset, convertCompare<kEqual>},
    {"Less", kMinOpset, kMaxOpset, convertCompare<kLess>},
    {"LessOrEqual", 12, kMaxOpset, convertCompare<kLessEqual>},
    {"Greater", kMinOpset, kMaxOpset, convertCompare<kGreater>},
    {"GreaterOrEqual", 12, kMaxOpset, convertCompare<kGreaterEqual>},
    // Reductions, LogSoftmax, CumSum (OnnxMathReduce.cpp).
    {"ReduceSum", kMinOpset, kMaxOpset, convertReduceSum},
    {"ReduceMax", kMinOpset, kMaxOpset, convertReduceMax},
    {"ReduceMin", kMinOpset, kMaxOpset, convertReduceMin},
    {"ReduceProd", kMinOpset, kMaxOpset, convertReduceProd},
    {"ReduceL2", kMinOpset, kMaxOpset, convertReduceL2},
    {"ReduceSumSquare", kMinOpset, kMaxOpset, convertReduceSumSquare},
    {"ReduceLogSumExp", kMinOpset, kMaxOpset, convertReduceLogSumExp},
    {"ArgMax", kMinOpset, kMaxOpset, convertArgMax},
    {"ArgMin", kMinOpset, kMaxOpset, convertArgMin},
    {"LogSoftmax", kMinOpset, kMaxOpset, convertLogSoftmax},
    {"CumSum", 11, kMaxOpset, convertCumSum},
    {"Dropout", kMinOpset, kMaxOpset, convertDropout},
    // Linear quantisation (OnnxQuantOps.cpp).
    {"DequantizeLinear", 10, kMaxOpset, convertDequantizeLinear},
    {"QuantizeLinear", 10, kMaxOpset, convertQuantizeLinear},
    {"DynamicQuantizeLinear", 11, kMaxOpset, convertDynamicQuantizeLinear},
    {"MatMulInteger", 10, kMaxOpset, convertMatMulInteger},
    {"QLinearMatMul", 10, kMaxOpset, convertQLinearMatMul},
    {"ConvInteger", 10, kMaxOpset, convertConvInteger},
    {"QLinearConv", 10, kMaxOpset, convertQLinearConv},
    // Normalisations (OnnxMathNorm.cpp).
    {"BatchNormalization", kMinOpset, kMaxOpset, convertBatchNormalization},
    {"InstanceNormalization", kMinOpset, kMaxOpset,
     convertInstanceNormalization},
    {"GroupNormalization", 21, kMaxOpset, convertGroupNormalization},
    {"LRN", kMinOpset, kMaxOpset, convertLRN},
    {"RMSNormalization", 23, kMaxOpset, convertRMSNormalization},
    {"SkipLayerNormalization", kMinOpset, kMaxOpset,
     convertSkipLayerNormalization, "com.microsoft"},
    {"SimplifiedLayerNormalization", kMinOpset, kMaxOpset,
     convertSimplifiedLayerNormalization, "com.microsoft"},
    // onnxruntime also accepts it in the default domain, and exporters
    // write it there.
    {"SimplifiedLayerNormalization", kMinOpset, kMaxOpset,
     convertSimplifiedLayerNormalization},
    // Integer arithmetic (OnnxBitwise.cpp).
    {"Mod", 10, kMaxOpset, convertMod},
    {"BitShift", 11, kMaxOpset, convertBitShift},
    {"BitwiseAnd", 18, kMaxOpset, convertBitwiseAnd},
    {"BitwiseOr", 18, kMaxOpset, convertBitwiseOr},
    {"BitwiseXor", 18, kMaxOpset, convertBitwiseXor},
    {"BitwiseNot", 18, kMaxOpset, convertBitwiseNot},
    // Einsum (OnnxMathEinsum.cpp).
    {"Einsum", 12, kMaxOpset, convertEinsum},
};

} // namespace

llvm::ArrayRef<OpConverter> mathOpConverters() { return kMathConverters; }

} // namespace ingot::compiler::onnximport
