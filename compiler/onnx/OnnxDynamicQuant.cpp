//===- OnnxDynamicQuant.cpp - DynamicQuantizeLinear -----------------------===//
//
// The activation quantiser onnxruntime's quantize_dynamic writes before
// every MatMulInteger: uint8 with a scale and zero point computed from the
// tensor's range (the kernel: runtime/src/cpu/DynamicQuantize.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

/// uint8 with the scale and zero point that map [min(x, 0), max(x, 0)]
/// onto [0, 255]; a constant x of 0 gets scale 1, as in onnxruntime. One
/// `ingot.dynamic_quantize_linear` op: as reductions and elementwise ops it
/// took 13 steps, each a pass or a dispatch of its own.
LogicalResult convertDynamicQuantizeLinear(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "x", {n.f32()})))
    return failure();
  Type u8 = IntegerType::get(n.ctx.mlir(), 8, IntegerType::Unsigned);
  FailureOr<Value> y = n.build<graph::DynamicQuantizeLinearOp>(
      u8, RankedTensorType::get({}, n.f32()), RankedTensorType::get({}, u8), x);
  if (failed(y))
    return failure();
  Operation *op = y->getDefiningOp();
  if (failed(n.setOutput(0, *y)) || failed(n.setOutput(1, op->getResult(1))))
    return failure();
  return n.setOutput(2, op->getResult(2));
}

} // namespace ingot::compiler::onnximport
