//===- OnnxNnOps.cpp - Contractions, normalisation, reductions ------------===//
//
// MatMul, Gemm, Softmax, LayerNormalization and ReduceMean. These kernels
// are float32 only (docs/kernels.md).
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"
#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

/// MatMul: numpy matrix product (1-D promotion, batch broadcasting).
LogicalResult convertMatMul(NodeContext &n) {
  Value a, b;
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.requireType(a, "input A", {n.f32()})) ||
      failed(n.requireType(b, "input B", {n.f32()})))
    return failure();
  return n.setOutput(0, n.build<graph::MatMulOp>(n.f32(), a, b));
}

/// Gemm: alpha * op(A) * op(B) + beta * C on 2-D A and B; C is optional.
LogicalResult convertGemm(NodeContext &n) {
  Value a, b, c;
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.optionalInput(2, c)) ||
      failed(n.requireType(a, "input A", {n.f32()})) ||
      failed(n.requireType(b, "input B", {n.f32()})) ||
      (c && failed(n.requireType(c, "input C", {n.f32()}))))
    return failure();
  int64_t rankA = cast<RankedTensorType>(a.getType()).getRank();
  int64_t rankB = cast<RankedTensorType>(b.getType()).getRank();
  if (rankA != 2 || rankB != 2)
    return n.fail("Gemm on a rank-" + std::to_string(rankA) + " A and a rank-" +
                      std::to_string(rankB) + " B",
                  "2-D A and B (use MatMul for other ranks)");
  OpBuilder &b_ = n.builder();
  float alpha = n.attrFloat("alpha", 1.0f), beta = n.attrFloat("beta", 1.0f);
  int64_t transA = n.attrInt("transA", 0), transB = n.attrInt("transB", 0);
  if (n.ctx.hasError())
    return failure();
  return n.setOutput(
      0, n.build<graph::GemmOp>(n.f32(), a, b, c, b_.getF32FloatAttr(alpha),
                                b_.getF32FloatAttr(beta),
                                b_.getI64IntegerAttr(transA != 0),
                                b_.getI64IntegerAttr(transB != 0)));
}

/// Softmax: along one axis, default -1 (opset 13+); before 13 over the
/// dims from `axis` (default 1) on, flattened.
LogicalResult convertSoftmax(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input", {n.f32()})))
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t axis = n.attrInt("axis", n.opset() >= 13 ? -1 : 1), normalized;
  if (n.ctx.hasError() ||
      failed(n.normalizeAxis(axis, rank, "axis", normalized)))
    return failure();
  return n.setOutput(0, softmaxOverTrailingDims(n, x, normalized, false));
}

/// LayerNormalization (17+): output Y only; Mean and InvStdDev may be
/// declared but must not be used.
namespace {

/// LayerNormalization's optional Mean and InvStdDev outputs (x's shape with
/// the normalised dims kept as 1), computed beside the fused kernel only
/// when something reads them: mean = E[x], inv = 1 / sqrt(E[(x - mean)^2]
/// + epsilon) over the dims from `axis` on.
LogicalResult layerNormStatistics(NodeContext &n, Value x, int64_t axis,
                                  float epsilon) {
  auto consumed = [&](int i) {
    return i < n.node.output_size() && !n.node.output(i).empty() &&
           n.ctx.isConsumed(n.node.output(i));
  };
  if (!consumed(1) && !consumed(2))
    return success();
  OpBuilder &b = n.builder();
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < cast<RankedTensorType>(x.getType()).getRank(); ++a)
    axes.push_back(a);
  auto mean = [&](Value v) {
    return n.build<graph::ReduceMeanOp>(
        n.f32(), v, b.getDenseI64ArrayAttr(axes), b.getI64IntegerAttr(1));
  };
  FailureOr<Value> mu = mean(x);
  if (failed(mu) || failed(n.setOutput(1, mu)))
    return failure();
  FailureOr<Value> centred = n.build<graph::SubOp>(n.f32(), x, *mu);
  if (failed(centred))
    return failure();
  FailureOr<Value> squared = n.build<graph::MulOp>(n.f32(), *centred, *centred);
  FailureOr<Value> variance = failed(squared) ? squared : mean(*squared);
  if (failed(variance))
    return failure();
  FailureOr<Value> shifted = n.build<graph::AddOp>(
      n.f32(), *variance, scalarConstant(n, n.f32(), epsilon));
  FailureOr<Value> stddev =
      failed(shifted) ? shifted : n.build<graph::SqrtOp>(n.f32(), *shifted);
  if (failed(stddev))
    return failure();
  return n.setOutput(2, n.build<graph::DivOp>(n.f32(),
                                              scalarConstant(n, n.f32(), 1.0f),
                                              *stddev));
}

} // namespace

LogicalResult convertLayerNormalization(NodeContext &n) {
  Value x, scale, bias;
  if (failed(n.input(0, x)) || failed(n.input(1, scale)) ||
      failed(n.optionalInput(2, bias)) ||
      failed(n.requireType(x, "input X", {n.f32()})))
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t axis = n.attrInt("axis", -1), normalized;
  float epsilon = n.attrFloat("epsilon", 1e-5f);
  int64_t stashType = n.attrInt("stash_type", onnx::TensorProto::FLOAT);
  if (n.ctx.hasError() ||
      failed(n.normalizeAxis(axis, rank, "axis", normalized)))
    return failure();
  if (stashType != onnx::TensorProto::FLOAT)
    return n.fail("stash_type " + std::to_string(stashType) + " (" +
                      dtypeName(int32_t(stashType)) + ")",
                  "1 (float32)");
  OpBuilder &b = n.builder();
  if (failed(n.setOutput(
          0, n.build<graph::LayerNormOp>(n.f32(), x, scale, bias,
                                         b.getI64IntegerAttr(axis),
                                         b.getF32FloatAttr(epsilon)))))
    return failure();
  return layerNormStatistics(n, x, normalized, epsilon);
}

/// ReduceMean: axes from the attribute before opset 18, from the optional
/// second input from 18 on, where empty axes with noop_with_empty_axes=1
/// make the node an identity. Axes known only at run time make it an
/// ingot.reduce of kind "mean", which reads them when it runs.
LogicalResult convertReduceMean(NodeContext &n) {
  if (n.opset() >= 18 && n.hasInput(1) &&
      !n.ctx.initializerInts(n.node.input(1))) {
    Value given;
    if (failed(n.input(1, given)))
      return failure();
    if (!n.ctx.constantInts(given))
      return convertReduceKind(n, "mean", false, 18);
  }
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "input", {n.f32()})))
    return failure();
  std::vector<int64_t> axes;
  bool noopWhenEmpty = false;
  if (n.opset() < 18) {
    axes = n.attrInts("axes");
  } else {
    noopWhenEmpty = n.attrInt("noop_with_empty_axes", 0) != 0;
    if (n.hasInput(1) && failed(n.constantInts(1, "axes", axes)))
      return failure();
  }
  int64_t keepdims = n.attrInt("keepdims", 1);
  if (n.ctx.hasError())
    return failure();
  if (axes.empty() && noopWhenEmpty)
    return n.setOutput(0, x);
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  // Axes stay as written (negative ones included); only their range is
  // checked here so the error names the node.
  for (int64_t axis : axes) {
    int64_t normalized;
    if (failed(n.normalizeAxis(axis, rank, "axis", normalized)))
      return failure();
  }
  OpBuilder &b = n.builder();
  return n.setOutput(
      0, n.build<graph::ReduceMeanOp>(n.f32(), x, b.getDenseI64ArrayAttr(axes),
                                      b.getI64IntegerAttr(keepdims != 0)));
}

} // namespace ingot::compiler::onnximport
