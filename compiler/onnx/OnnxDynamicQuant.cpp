//===- OnnxDynamicQuant.cpp - DynamicQuantizeLinear -----------------------===//
//
// The activation quantiser onnxruntime's quantize_dynamic writes before
// every MatMulInteger: uint8 with a scale and zero point computed from the
// tensor's range, rounded and saturated by the shared `quantize`
// (OnnxQuantOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

/// uint8 with the scale and zero point that map [min(x, 0), max(x, 0)]
/// onto [0, 255]; a constant x of 0 gets scale 1, as in onnxruntime.
LogicalResult convertDynamicQuantizeLinear(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "x", {n.f32()})))
    return failure();
  OpBuilder &b = n.builder();
  auto reduce = [&](const char *kind) -> FailureOr<Value> {
    FailureOr<Value> r = n.build<graph::ReduceOp>(
        n.f32(), x, Value(), b.getStringAttr(kind), b.getDenseI64ArrayAttr({}),
        b.getI64IntegerAttr(0), IntegerAttr());
    if (failed(r))
      return r;
    return n.build<graph::BinaryMathOp>(
        n.f32(), *r, scalarConstant(n, n.f32(), 0.0), b.getStringAttr(kind));
  };
  FailureOr<Value> lo = reduce("min"), hi = reduce("max");
  if (failed(lo) || failed(hi))
    return failure();
  FailureOr<Value> span = n.build<graph::SubOp>(n.f32(), *hi, *lo);
  FailureOr<Value> scale, same, zp;
  if (succeeded(span))
    scale = n.build<graph::DivOp>(n.f32(), *span,
                                  scalarConstant(n, n.f32(), 255.0));
  if (succeeded(scale))
    same = n.build<graph::CompareOp>(n.i1(), *span,
                                     scalarConstant(n, n.f32(), 0.0),
                                     b.getStringAttr("equal"));
  if (succeeded(same))
    scale = n.build<graph::WhereOp>(n.f32(), *same,
                                    scalarConstant(n, n.f32(), 1.0), *scale);
  // zero point = round(clamp(0 - lo / scale, 0, 255)): quantize() of -lo.
  Type u8 = IntegerType::get(n.ctx.mlir(), 8, IntegerType::Unsigned);
  FailureOr<Value> negLo = n.build<graph::NegOp>(n.f32(), *lo);
  if (failed(scale) || failed(negLo))
    return failure();
  zp = quantize(n, *negLo, *scale, Value(), u8);
  FailureOr<Value> zpF32 = failed(zp) ? zp : castTo(n, *zp, n.f32());
  if (failed(zpF32))
    return failure();
  if (failed(n.setOutput(0, quantize(n, x, *scale, *zpF32, u8))) ||
      failed(n.setOutput(1, *scale)))
    return failure();
  return n.setOutput(2, *zp);
}

} // namespace ingot::compiler::onnximport
