//===- OnnxMathNorm.cpp - Normalisations composed of ingot ops ------------===//
//
// BatchNormalization (inference), InstanceNormalization,
// GroupNormalization, LRN, RMSNormalization and the com.microsoft
// SkipLayerNormalization / SimplifiedLayerNormalization exporters emit.
// Each is a short chain of existing ops (reduce_mean, sub, mul, sqrt, div,
// reshape, average_pool, layer_norm), so they need no kernels of their
// own; all are float32. Statistics are two-pass (mean, then mean of squared
// deviations), which keeps the error at f32 rounding level.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

/// "[2, ?, 4]", for messages.
std::string describeType(RankedTensorType t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.getRank(); ++i)
    s +=
        (i ? ", " : "") + (t.isDynamicDim(i) ? std::string("?")
                                             : std::to_string(t.getDimSize(i)));
  return s + "]";
}

Value scalarF32(NodeContext &n, float value) {
  auto type = RankedTensorType::get({}, n.f32());
  return graph::ConstantOp::create(n.builder(), n.loc(), type,
                                   DenseElementsAttr::get(type, llvm::ArrayRef<float>(value)));
}

/// A small builder over NodeContext that stops at the first failure.
struct Chain {
  NodeContext &n;
  bool ok = true;

  template <typename OpTy> Value binary(Value a, Value b) {
    if (!ok)
      return nullptr;
    FailureOr<Value> r = n.build<OpTy>(n.f32(), a, b);
    ok = succeeded(r);
    return ok ? *r : nullptr;
  }
  Value add(Value a, Value b) { return binary<graph::AddOp>(a, b); }
  Value sub(Value a, Value b) { return binary<graph::SubOp>(a, b); }
  Value mul(Value a, Value b) { return binary<graph::MulOp>(a, b); }
  Value div(Value a, Value b) { return binary<graph::DivOp>(a, b); }
  Value sqrt(Value a) {
    if (!ok)
      return nullptr;
    FailureOr<Value> r = n.build<graph::SqrtOp>(n.f32(), a);
    ok = succeeded(r);
    return ok ? *r : nullptr;
  }
  Value mean(Value a, ArrayRef<int64_t> axes) {
    if (!ok)
      return nullptr;
    OpBuilder &b = n.builder();
    FailureOr<Value> r = n.build<graph::ReduceMeanOp>(
        n.f32(), a, b.getDenseI64ArrayAttr(axes), b.getI64IntegerAttr(1));
    ok = succeeded(r);
    return ok ? *r : nullptr;
  }
  /// [C] -> [C, 1, ..., 1] so it broadcasts over the channel dim (axis 1)
  /// of a rank-`rank` input.
  Value perChannel(Value v, int64_t rank) {
    if (!ok || rank <= 2)
      return v;
    SmallVector<int64_t> axes;
    for (int64_t i = 1; i <= rank - 2; ++i)
      axes.push_back(i);
    return reshapeAxes<graph::UnsqueezeOp>(v, axes);
  }
  template <typename OpTy> Value reshapeAxes(Value v, ArrayRef<int64_t> axes) {
    if (!ok)
      return nullptr;
    FailureOr<Value> r =
        n.build<OpTy>(n.f32(), v, n.builder().getDenseI64ArrayAttr(axes));
    ok = succeeded(r);
    return ok ? *r : nullptr;
  }
  /// `v` reshaped to `shape` (an i64 tensor; 0 copies v's dim).
  Value reshape(Value v, Value shape) {
    if (!ok)
      return nullptr;
    FailureOr<Value> r = n.build<graph::ReshapeOp>(
        n.f32(), v, shape, n.builder().getI64IntegerAttr(0));
    ok = succeeded(r);
    return ok ? *r : nullptr;
  }
  Value shapeOf(Value v) {
    if (!ok)
      return nullptr;
    OpBuilder &b = n.builder();
    FailureOr<Value> r = n.build<graph::ShapeOp>(
        n.i64(), v, b.getI64IntegerAttr(0), b.getI64IntegerAttr(INT64_MAX));
    ok = succeeded(r);
    return ok ? *r : nullptr;
  }
  Value pow(Value a, Value b) { return binary<graph::PowOp>(a, b); }
  /// (x − mean) / sqrt(var + ε) over `axes`, variance two-pass.
  Value normalize(Value x, ArrayRef<int64_t> axes, float epsilon) {
    Value centered = sub(x, mean(x, axes));
    Value var = mean(mul(centered, centered), axes);
    return div(centered, sqrt(add(var, scalarF32(n, epsilon))));
  }
};

LogicalResult requireF32(NodeContext &n, ArrayRef<Value> values) {
  for (Value v : values)
    if (v && failed(n.requireType(v, "input", {n.f32()})))
      return failure();
  return success();
}

LogicalResult requireStashF32(NodeContext &n) {
  int64_t stash = n.attrInt("stash_type", onnx::TensorProto::FLOAT);
  if (n.ctx.hasError())
    return failure();
  if (stash != onnx::TensorProto::FLOAT)
    return n.fail("stash_type " + std::to_string(stash) + " (" +
                      dtypeName(int32_t(stash)) + ")",
                  "1 (float32)");
  return success();
}

/// y = x / sqrt(mean(x², dims [axis, rank)) + eps) · scale.
LogicalResult rmsNorm(NodeContext &n) {
  Value x, scale;
  if (failed(n.input(0, x)) || failed(n.input(1, scale)) ||
      failed(requireF32(n, {x, scale})) || failed(requireStashF32(n)))
    return failure();
  int64_t rank = rankOf(x), axis = n.attrInt("axis", -1), normalized;
  float epsilon = n.attrFloat("epsilon", 1e-5f);
  if (n.ctx.hasError() || failed(n.normalizeAxis(axis, rank, "axis", normalized)))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t i = normalized; i < rank; ++i)
    axes.push_back(i);
  Chain c{n};
  Value ms = c.mean(c.mul(x, x), axes);
  Value y = c.mul(c.div(x, c.sqrt(c.add(ms, scalarF32(n, epsilon)))), scale);
  if (!c.ok)
    return failure();
  return n.setOutput(0, y);
}

} // namespace

/// BatchNormalization, inference form: (x − mean) · scale / sqrt(var + eps)
/// + B, per channel (axis 1). training_mode=1 is rejected.
LogicalResult convertBatchNormalization(NodeContext &n) {
  Value x, scale, bias, mean, var;
  if (failed(n.input(0, x)) || failed(n.input(1, scale)) ||
      failed(n.input(2, bias)) || failed(n.input(3, mean)) ||
      failed(n.input(4, var)) ||
      failed(requireF32(n, {x, scale, bias, mean, var})))
    return failure();
  int64_t training = n.attrInt("training_mode", 0);
  float epsilon = n.attrFloat("epsilon", 1e-5f);
  // Before opset 9, spatial = 0 meant statistics per (channel, position).
  int64_t spatial = n.opset() < 9 ? n.attrInt("spatial", 1) : 1;
  if (n.ctx.hasError())
    return failure();
  if (spatial != 1)
    return n.fail("spatial = " + std::to_string(spatial),
                  "spatial = 1 (per-channel statistics)");
  if (training != 0)
    return n.fail("training_mode = " + std::to_string(training),
                  "training_mode = 0 (inference)");
  if (failed(n.requireUnused(1, "running_mean")) ||
      failed(n.requireUnused(2, "running_var")))
    return failure();
  int64_t rank = rankOf(x);
  if (rank < 2)
    return n.fail("input of rank " + std::to_string(rank), "rank >= 2 (N, C, ...)");
  Chain c{n};
  Value factor = c.div(scale, c.sqrt(c.add(var, scalarF32(n, epsilon))));
  Value y = c.add(c.mul(c.sub(x, c.perChannel(mean, rank)),
                        c.perChannel(factor, rank)),
                  c.perChannel(bias, rank));
  if (!c.ok)
    return failure();
  return n.setOutput(0, y);
}

/// InstanceNormalization: normalise each (n, c) over the spatial dims.
LogicalResult convertInstanceNormalization(NodeContext &n) {
  Value x, scale, bias;
  if (failed(n.input(0, x)) || failed(n.input(1, scale)) ||
      failed(n.input(2, bias)) || failed(requireF32(n, {x, scale, bias})))
    return failure();
  float epsilon = n.attrFloat("epsilon", 1e-5f);
  if (n.ctx.hasError())
    return failure();
  int64_t rank = rankOf(x);
  if (rank < 3)
    return n.fail("input of rank " + std::to_string(rank),
                  "rank >= 3 (N, C, D1, ...)");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  Chain c{n};
  Value normalized = c.normalize(x, axes, epsilon);
  Value y = c.add(c.mul(normalized, c.perChannel(scale, rank)),
                  c.perChannel(bias, rank));
  if (!c.ok)
    return failure();
  return n.setOutput(0, y);
}

/// GroupNormalization with C only known at run time: x viewed as
/// [N, G, C / G, spatial...], whose reshape fails the run when G does not
/// divide C (a flat [N, G, -1] view would silently mix channels of two
/// groups whenever G divides C * spatial instead).
LogicalResult groupNormRunTimeChannels(NodeContext &n, Value x, Value scale,
                                       Value bias, int64_t groups,
                                       float epsilon) {
  const int64_t rank = rankOf(x);
  if (groups <= 0)
    return n.fail("num_groups " + std::to_string(groups), "num_groups >= 1");
  for (auto [v, role] : {std::pair{scale, "scale"}, {bias, "bias"}})
    if (rankOf(v) != 1)
      return n.fail(std::string(role) + " of rank " + std::to_string(rankOf(v)),
                    "[C] (one per channel)");
  OpBuilder &b = n.builder();
  FailureOr<Value> spatial = n.build<graph::ShapeOp>(
      n.i64(), x, b.getI64IntegerAttr(2), b.getI64IntegerAttr(INT64_MAX));
  FailureOr<Value> view = spatial;
  if (succeeded(view))
    view = n.build<graph::ConcatOp>(
        n.i64(), ValueRange{tensorI64Constant(n, {0, groups, -1}), *spatial},
        b.getI64IntegerAttr(0));
  if (failed(view))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i <= rank; ++i)
    axes.push_back(i);
  Chain c{n};
  Value y =
      c.reshape(c.normalize(c.reshape(x, *view), axes, epsilon), c.shapeOf(x));
  y = c.add(c.mul(y, c.perChannel(scale, rank)), c.perChannel(bias, rank));
  if (!c.ok)
    return failure();
  return n.setOutput(0, y);
}

/// GroupNormalization (21): x [N, C, ...] viewed as [N, G, rest] (C a
/// multiple of G), each (n, g) normalised over `rest`, then scale and bias
/// per channel. Opsets 18-20 are not claimed: their per-group scale was a
/// spec error that ONNX deprecated.
LogicalResult convertGroupNormalization(NodeContext &n) {
  Value x, scale, bias;
  if (failed(n.input(0, x)) || failed(n.input(1, scale)) ||
      failed(n.input(2, bias)) || failed(requireF32(n, {x, scale, bias})) ||
      failed(requireStashF32(n)))
    return failure();
  const float epsilon = n.attrFloat("epsilon", 1e-5f);
  const int64_t groups = n.attrInt("num_groups", 0);
  if (n.ctx.hasError())
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() < 2)
    return n.fail("input " + describeType(type), "rank >= 2 (N, C, ...)");
  if (type.isDynamicDim(1))
    return groupNormRunTimeChannels(n, x, scale, bias, groups, epsilon);
  const int64_t channels = type.getDimSize(1), rank = type.getRank();
  if (groups <= 0 || channels % groups)
    return n.fail("num_groups " + std::to_string(groups) + " for " +
                      std::to_string(channels) + " channels",
                  "a positive divisor of the channel count");
  for (auto [v, role] : {std::pair{scale, "scale"}, {bias, "bias"}}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != channels)
      return n.fail(std::string(role) + " " + describeType(t),
                    "[" + std::to_string(channels) + "] (one per channel)");
  }
  Chain c{n};
  Value grouped = c.reshape(x, tensorI64Constant(n, {0, groups, -1}));
  Value y = c.reshape(c.normalize(grouped, {2}, epsilon), c.shapeOf(x));
  y = c.add(c.mul(y, c.perChannel(scale, rank)), c.perChannel(bias, rank));
  if (!c.ok)
    return failure();
  return n.setOutput(0, y);
}

/// LRN: y = x / (bias + alpha / size · Σ x²)^beta, the sum over the
/// channels c − floor((size − 1) / 2) .. c + ceil((size − 1) / 2) that
/// exist. alpha / size · Σ is alpha times the average of an average_pool
/// (padding counted) over x² with a unit dim inserted before C, so the
/// channels become the pool's first spatial dim.
LogicalResult convertLRN(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(requireF32(n, {x})))
    return failure();
  const float alpha = n.attrFloat("alpha", 1e-4f);
  const float beta = n.attrFloat("beta", 0.75f);
  const float bias = n.attrFloat("bias", 1.0f);
  const int64_t size = n.attrInt("size", 0);
  if (n.ctx.hasError())
    return failure();
  const int64_t rank = rankOf(x);
  if (rank < 3 || rank > 4)
    return n.fail("a rank-" + std::to_string(rank) + " input",
                  "rank 3 or 4 (N, C, D1[, D2])");
  if (size <= 0)
    return n.fail("size " + std::to_string(size), "size >= 1");
  // Pool dims: the channels, then x's spatial dims with unit windows.
  const size_t nd = size_t(rank - 1);
  std::vector<int64_t> kernel(nd, 1), ones(nd, 1), pads(2 * nd, 0);
  kernel[0] = size;
  pads[0] = (size - 1) / 2;
  pads[nd] = size / 2; // ceil((size - 1) / 2)
  Chain c{n};
  Value lifted = c.reshapeAxes<graph::UnsqueezeOp>(c.mul(x, x), {1});
  if (!c.ok)
    return failure();
  OpBuilder &b = n.builder();
  FailureOr<Value> average = n.build<graph::AveragePoolOp>(
      n.f32(), lifted, b.getDenseI64ArrayAttr(kernel),
      b.getDenseI64ArrayAttr(ones), b.getDenseI64ArrayAttr(pads),
      b.getDenseI64ArrayAttr(ones), b.getStringAttr("NOTSET"),
      b.getI64IntegerAttr(0), b.getI64IntegerAttr(1), b.getI64IntegerAttr(0));
  if (failed(average))
    return failure();
  Value sumTerm = c.mul(c.reshapeAxes<graph::SqueezeOp>(*average, {1}),
                        scalarF32(n, alpha));
  Value y =
      c.div(x, c.pow(c.add(sumTerm, scalarF32(n, bias)), scalarF32(n, beta)));
  if (!c.ok)
    return failure();
  return n.setOutput(0, y);
}

/// RMSNormalization (23): over dims [axis, rank), scale broadcasts.
LogicalResult convertRMSNormalization(NodeContext &n) { return rmsNorm(n); }

/// com.microsoft SimplifiedLayerNormalization: RMS norm; the optional
/// inv_std_var output must be unused.
LogicalResult convertSimplifiedLayerNormalization(NodeContext &n) {
  if (failed(n.requireUnused(1, "inv_std_var")))
    return failure();
  return rmsNorm(n);
}

/// com.microsoft SkipLayerNormalization: s = input + skip (+ bias), then
/// layer norm over the last dim with gamma (and beta). Output 3 is s.
LogicalResult convertSkipLayerNormalization(NodeContext &n) {
  Value x, skip, gamma, beta, bias;
  if (failed(n.input(0, x)) || failed(n.input(1, skip)) ||
      failed(n.input(2, gamma)) || failed(n.optionalInput(3, beta)) ||
      failed(n.optionalInput(4, bias)) ||
      failed(requireF32(n, {x, skip, gamma, beta, bias})) ||
      failed(n.requireUnused(1, "mean")) ||
      failed(n.requireUnused(2, "inv_std_var")))
    return failure();
  float epsilon = n.attrFloat("epsilon", 1e-12f);
  if (n.ctx.hasError())
    return failure();
  Chain c{n};
  Value sum = c.add(x, skip);
  if (bias)
    sum = c.add(sum, bias);
  if (!c.ok)
    return failure();
  OpBuilder &b = n.builder();
  FailureOr<Value> y = n.build<graph::LayerNormOp>(
      n.f32(), sum, gamma, beta, b.getI64IntegerAttr(-1),
      b.getF32FloatAttr(epsilon));
  if (failed(n.setOutput(0, y)))
    return failure();
  if (n.node.output_size() > 3 && !n.node.output(3).empty())
    return n.setOutput(3, sum);
  return success();
}

} // namespace ingot::compiler::onnximport
