//===- OnnxComposite.cpp - ONNX ops written as a few graph ops ------------===//
//
// Activations and arithmetic that ONNX names but ingot needs no kernel for:
// each is the short expression of existing graph ops its spec gives (PRelu
// = where(x < 0, x * slope, x), HardSwish = x * hard_sigmoid(x), ...), which
// the fusion passes then merge into one fused elementwise kernel. Sum, Mean
// and Xor fold their inputs left to right; ReduceL1 and ReduceLogSum wrap
// ReduceSum.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"
#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Builds graph ops of one node; after the first failure it builds nothing
/// more and every result is null, so a converter checks once, at the end.
class Expr {
public:
  explicit Expr(NodeContext &n) : n_(n) {}

  bool failedAny() const { return failed_; }
  Value constant(Type t, double v) {
    return failed_ ? Value() : scalarConstant(n_, t, v);
  }
  template <typename OpTy> Value binary(Value a, Value b) {
    return take(a && b ? n_.build<OpTy>(elementTypeOf(a), a, b)
                       : FailureOr<Value>(failure()));
  }
  Value add(Value a, Value b) { return binary<graph::AddOp>(a, b); }
  Value sub(Value a, Value b) { return binary<graph::SubOp>(a, b); }
  Value mul(Value a, Value b) { return binary<graph::MulOp>(a, b); }
  Value div(Value a, Value b) { return binary<graph::DivOp>(a, b); }
  Value compare(Value a, Value b, StringRef kind) {
    return take(a && b ? n_.build<graph::CompareOp>(
                             n_.i1(), a, b, n_.builder().getStringAttr(kind))
                       : FailureOr<Value>(failure()));
  }
  Value where(Value c, Value a, Value b) {
    return take(c && a && b
                    ? n_.build<graph::WhereOp>(elementTypeOf(a), c, a, b)
                    : FailureOr<Value>(failure()));
  }
  Value unary(Value x, StringRef kind, std::optional<float> alpha = {},
              std::optional<float> beta = {}) {
    OpBuilder &b = n_.builder();
    return take(x ? n_.build<graph::UnaryMathOp>(
                        elementTypeOf(x), x, b.getStringAttr(kind),
                        alpha ? b.getF32FloatAttr(*alpha) : FloatAttr(),
                        beta ? b.getF32FloatAttr(*beta) : FloatAttr())
                  : FailureOr<Value>(failure()));
  }
  Value exp(Value x) {
    return take(x ? n_.build<graph::ExpOp>(elementTypeOf(x), x)
                  : FailureOr<Value>(failure()));
  }
  /// The node's output 0, or failure if anything failed.
  LogicalResult output(Value v) {
    if (failed_ || !v)
      return failure();
    return n_.setOutput(0, v);
  }

private:
  Value take(FailureOr<Value> v) {
    if (failed(v)) {
      failed_ = true;
      return Value();
    }
    return *v;
  }
  NodeContext &n_;
  bool failed_ = false;
};

/// Input 0 as f32 (after OnnxNarrowTypes), or failure.
FailureOr<Value> floatInput(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input X", {n.f32()})))
    return failure();
  return x;
}

/// Sum and Mean (float types): a left-to-right chain of broadcasting adds,
/// Mean then divided by the input count.
LogicalResult convertSumOrMean(NodeContext &n, bool mean) {
  if (n.node.input_size() < 1)
    return n.fail("needs at least one input");
  Expr e(n);
  Value acc;
  if (failed(n.input(0, acc)) ||
      failed(n.requireType(acc, "input #0", {n.f32()})))
    return failure();
  for (int i = 1; i < n.node.input_size(); ++i) {
    Value next;
    if (failed(n.input(i, next)) ||
        failed(n.requireType(next, "input (must be float32 as #0)", {n.f32()})))
      return failure();
    acc = e.add(acc, next);
  }
  if (mean && n.node.input_size() > 1)
    acc = e.div(acc, e.constant(n.f32(), double(n.node.input_size())));
  return e.output(acc);
}
LogicalResult convertSum(NodeContext &n) { return convertSumOrMean(n, false); }
LogicalResult convertMean(NodeContext &n) { return convertSumOrMean(n, true); }

/// PRelu: x where x >= 0, else slope * x (slope broadcasts to x).
LogicalResult convertPRelu(NodeContext &n) {
  Value x, slope;
  if (failed(n.input(0, x)) || failed(n.input(1, slope)) ||
      failed(n.requireType(x, "input X", numericTypes(n))) ||
      failed(n.requireType(slope, "slope (must match X)", {elementTypeOf(x)})))
    return failure();
  Expr e(n);
  Type t = elementTypeOf(x);
  return e.output(
      e.where(e.compare(x, e.constant(t, 0.0), "less"), e.mul(x, slope), x));
}

/// HardSwish (14): x * max(0, min(1, x / 6 + 1 / 2)).
LogicalResult convertHardSwish(NodeContext &n) {
  FailureOr<Value> x = floatInput(n);
  if (failed(x))
    return failure();
  Expr e(n);
  return e.output(e.mul(*x, e.unary(*x, "hard_sigmoid", 1.0f / 6, 0.5f)));
}

/// Selu: gamma * elu(x, alpha).
LogicalResult convertSelu(NodeContext &n) {
  FailureOr<Value> x = floatInput(n);
  const float alpha = n.attrFloat("alpha", 1.67326319217681884765625f);
  const float gamma = n.attrFloat("gamma", 1.05070102214813232421875f);
  if (failed(x) || n.ctx.hasError())
    return failure();
  Expr e(n);
  return e.output(e.mul(e.unary(*x, "elu", alpha), e.constant(n.f32(), gamma)));
}

/// Celu (12): x where x > 0, else alpha * (exp(x / alpha) - 1).
LogicalResult convertCelu(NodeContext &n) {
  FailureOr<Value> x = floatInput(n);
  const float alpha = n.attrFloat("alpha", 1.0f);
  if (failed(x) || n.ctx.hasError())
    return failure();
  if (alpha == 0)
    return n.fail("alpha = 0", "a nonzero alpha");
  Expr e(n);
  Value a = e.constant(n.f32(), alpha);
  Value neg = e.mul(a, e.sub(e.exp(e.div(*x, a)), e.constant(n.f32(), 1.0)));
  return e.output(
      e.where(e.compare(*x, e.constant(n.f32(), 0.0), "greater"), *x, neg));
}

/// ThresholdedRelu (10): x where x > alpha, else 0.
LogicalResult convertThresholdedRelu(NodeContext &n) {
  FailureOr<Value> x = floatInput(n);
  const float alpha = n.attrFloat("alpha", 1.0f);
  if (failed(x) || n.ctx.hasError())
    return failure();
  Expr e(n);
  return e.output(e.where(e.compare(*x, e.constant(n.f32(), alpha), "greater"),
                          *x, e.constant(n.f32(), 0.0)));
}

/// Softsign: x / (1 + |x|).
LogicalResult convertSoftsign(NodeContext &n) {
  FailureOr<Value> x = floatInput(n);
  if (failed(x))
    return failure();
  Expr e(n);
  return e.output(
      e.div(*x, e.add(e.constant(n.f32(), 1.0), e.unary(*x, "abs"))));
}

/// Shrink (9): x + bias below -lambd, x - bias above lambd, else 0.
LogicalResult convertShrink(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) ||
      failed(n.requireType(x, "input", numericTypes(n))))
    return failure();
  const float lambd = n.attrFloat("lambd", 0.5f);
  const float bias = n.attrFloat("bias", 0.0f);
  if (n.ctx.hasError())
    return failure();
  Expr e(n);
  Type t = elementTypeOf(x);
  Value b = e.constant(t, bias);
  Value above = e.where(e.compare(x, e.constant(t, lambd), "greater"),
                        e.sub(x, b), e.constant(t, 0.0));
  return e.output(
      e.where(e.compare(x, e.constant(t, -lambd), "less"), e.add(x, b), above));
}

/// Xor on bools: not(a == b).
LogicalResult convertXor(NodeContext &n) {
  Value a, b;
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.requireType(a, "input A", {n.i1()})) ||
      failed(n.requireType(b, "input B", {n.i1()})))
    return failure();
  Expr e(n);
  return e.output(e.unary(e.compare(a, b, "equal"), "not"));
}

/// ReduceL1: ReduceSum of |x|.
LogicalResult convertReduceL1(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) ||
      failed(n.requireType(x, "input", numericTypes(n))))
    return failure();
  Expr e(n);
  Value abs = e.unary(x, "abs");
  if (e.failedAny())
    return failure();
  n.overrideInput(0, abs);
  return convertReduceSum(n);
}

/// ReduceLogSum: log of ReduceSum.
LogicalResult convertReduceLogSum(NodeContext &n) {
  if (failed(convertReduceSum(n)))
    return failure();
  const std::string &name = n.node.output(0);
  FailureOr<Value> sum = n.ctx.lookup(name);
  if (failed(sum) || failed(n.requireType(*sum, "input", {n.f32()})))
    return failure();
  Expr e(n);
  Value log = e.unary(*sum, "log");
  if (e.failedAny())
    return failure();
  n.ctx.define(name, log);
  return success();
}

const OpConverter kCompositeConverters[] = {
    {"Sum", kMinOpset, kMaxOpset, convertSum},
    {"Mean", kMinOpset, kMaxOpset, convertMean},
    {"PRelu", kMinOpset, kMaxOpset, convertPRelu},
    {"HardSwish", 14, kMaxOpset, convertHardSwish},
    {"Selu", kMinOpset, kMaxOpset, convertSelu},
    {"Celu", 12, kMaxOpset, convertCelu},
    {"ThresholdedRelu", 10, kMaxOpset, convertThresholdedRelu},
    {"Softsign", kMinOpset, kMaxOpset, convertSoftsign},
    {"Shrink", 9, kMaxOpset, convertShrink},
    {"Xor", kMinOpset, kMaxOpset, convertXor},
    {"ReduceL1", kMinOpset, kMaxOpset, convertReduceL1},
    {"ReduceLogSum", kMinOpset, kMaxOpset, convertReduceLogSum},
};

} // namespace

llvm::ArrayRef<OpConverter> compositeOpConverters() {
  return kCompositeConverters;
}

} // namespace ingot::compiler::onnximport
