//===- OnnxQuantMatMul.cpp - MatMulInteger and QLinearMatMul --------------===//
//
// MatMulInteger, the product onnxruntime's dynamic quantiser writes for
// every MatMul, maps to ingot.matmul_integer, an exact int32 kernel on the
// packed 8-bit values; QLinearMatMul is that product requantised.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// MatMulInteger of a batch of B matrices ([batch, K, N], batch static):
/// one product per batch entry (A's batch is 1 or the same), stacked.
FailureOr<Value> batchedMatMulInteger(NodeContext &n, Value a, Value b,
                                      Value azp, Value bzp) {
  auto ta = cast<RankedTensorType>(a.getType()),
       tb = cast<RankedTensorType>(b.getType());
  const int64_t batch = tb.getDimSize(0), aBatch = ta.getDimSize(0);
  if (ta.getRank() != 3 || ShapedType::isDynamic(batch) ||
      (aBatch != 1 && aBatch != batch))
    return n.fail(ShapedType::isDynamic(batch)
                      ? std::string("a 3-D B whose batch is only known at "
                                    "run time")
                      : "a " + std::to_string(ta.getRank()) +
                            "-D A with a B of batch " + std::to_string(batch),
                  "a 2-D B, or a 3-D B of static batch with a 3-D A of batch "
                  "1 or the same");
  OpBuilder &bld = n.builder();
  SmallVector<Value> parts;
  for (int64_t i = 0; i < batch; ++i) {
    auto pick = [&](Value v, int64_t at) {
      return n.build<graph::GatherOp>(elementTypeOf(v), v,
                                      scalarConstant(n, n.i64(), double(at)),
                                      bld.getI64IntegerAttr(0));
    };
    FailureOr<Value> ai = pick(a, aBatch == 1 ? 0 : i), bi = pick(b, i);
    if (failed(ai) || failed(bi))
      return failure();
    FailureOr<Value> ci = n.build<graph::MatMulIntegerOp>(
        n.i32(), *ai, *bi, azp, bzp, Value(), Value(), nullptr);
    if (succeeded(ci))
      ci = n.build<graph::UnsqueezeOp>(n.i32(), *ci,
                                       bld.getDenseI64ArrayAttr({0}));
    if (failed(ci))
      return failure();
    parts.push_back(*ci);
  }
  return n.build<graph::ConcatOp>(n.i32(), parts, bld.getI64IntegerAttr(0));
}

} // namespace

LogicalResult requireInteger8(NodeContext &n, Value a, Value b) {
  for (Value v : {a, b})
    if (Type t = elementTypeOf(v); !t.isInteger(8))
      return n.fail("operand has element type " + typeName(t),
                    "uint8 and int8");
  return success();
}

/// (A - a_zp) x (B - b_zp) in int32 on the int8 kernel: u8/s8 operands,
/// A of rank >= 2, B 2-D or a 3-D stack of static batch.
FailureOr<Value> integerProduct(NodeContext &n, Value a, Value b, Value azp,
                                Value bzp) {
  if (failed(requireInteger8(n, a, b)))
    return failure();
  auto ta = cast<RankedTensorType>(a.getType()),
       tb = cast<RankedTensorType>(b.getType());
  if (ta.getRank() < 2 || (tb.getRank() != 2 && tb.getRank() != 3))
    return n.fail("A has rank " + std::to_string(ta.getRank()) +
                      " and B rank " + std::to_string(tb.getRank()),
                  "A of rank >= 2 and a 2-D or 3-D B");
  if (tb.getRank() == 2)
    return n.build<graph::MatMulIntegerOp>(n.i32(), a, b, azp, bzp, Value(),
                                           Value(), nullptr);
  return batchedMatMulInteger(n, a, b, azp, bzp);
}

/// (A - a_zero_point) x (B - b_zero_point) in int32.
LogicalResult convertMatMulInteger(NodeContext &n) {
  Value a, b, azp, bzp;
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.optionalInput(2, azp)) || failed(n.optionalInput(3, bzp)))
    return failure();
  return n.setOutput(0, integerProduct(n, a, b, azp, bzp));
}

/// saturate(round(acc * (a_scale * b_scale / y_scale)) + y_zp) as `target`,
/// the combined scale in one float multiply as the ONNX reference computes
/// it; b_scale may already be laid out per column or channel.
FailureOr<Value> requantize(NodeContext &n, Value acc, Value as, Value bs,
                            Value ys, Value yzp, Type target) {
  Type scaleType = elementTypeOf(as);
  for (Value v : {as, bs, ys})
    if (failed(
            n.requireType(v, "a scale", {n.f32(), n.builder().getF16Type()})))
      return failure();
    else if (elementTypeOf(v) != scaleType)
      return n.fail("the scales have different dtypes", "one scale dtype");
  if (!target.isInteger(8))
    return n.fail("y_zero_point is " + typeName(target), "uint8 or int8");
  // float16 scales combine in float16 (the reference's arithmetic): each
  // f32 step of two f16 values, rounded back to f16.
  auto roundToScaleType = [&](FailureOr<Value> v) -> FailureOr<Value> {
    if (failed(v) || scaleType == n.f32())
      return v;
    FailureOr<Value> h = castTo(n, *v, scaleType);
    return failed(h) ? h : castTo(n, *h, n.f32());
  };
  FailureOr<Value> asF = castTo(n, as, n.f32()), bsF = castTo(n, bs, n.f32()),
                   ysF = castTo(n, ys, n.f32());
  if (failed(asF) || failed(bsF) || failed(ysF))
    return failure();
  FailureOr<Value> scale =
      roundToScaleType(n.build<graph::MulOp>(n.f32(), *asF, *bsF));
  if (succeeded(scale))
    scale = roundToScaleType(n.build<graph::DivOp>(n.f32(), *scale, *ysF));
  FailureOr<Value> accF = castTo(n, acc, n.f32());
  if (succeeded(accF) && succeeded(scale))
    accF = n.build<graph::MulOp>(n.f32(), *accF, *scale);
  FailureOr<Value> zp = Value();
  if (yzp)
    zp = castTo(n, yzp, n.f32());
  if (failed(accF) || failed(zp))
    return failure();
  return quantize(n, *accF, scalarConstant(n, n.f32(), 1.0), *zp, target);
}

/// saturate(round(((A - a_zp) x (B - b_zp)) * (a_scale * b_scale / y_scale))
/// + y_zp): the integer product on MatMulInteger's int8 kernel, then the
/// requantisation.
LogicalResult convertQLinearMatMul(NodeContext &n) {
  Value a, as, azp, b, bs, bzp, ys, yzp;
  if (failed(n.input(0, a)) || failed(n.input(1, as)) ||
      failed(n.optionalInput(2, azp)) || failed(n.input(3, b)) ||
      failed(n.input(4, bs)) || failed(n.optionalInput(5, bzp)) ||
      failed(n.input(6, ys)) || failed(n.optionalInput(7, yzp)))
    return failure();
  FailureOr<Value> acc = integerProduct(n, a, b, azp, bzp);
  if (failed(acc))
    return failure();
  Type target = yzp ? elementTypeOf(yzp) : elementTypeOf(a);
  return n.setOutput(0, requantize(n, *acc, as, bs, ys, yzp, target));
}

} // namespace ingot::compiler::onnximport
