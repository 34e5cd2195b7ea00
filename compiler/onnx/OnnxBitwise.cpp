//===- OnnxBitwise.cpp - Mod, BitShift and the Bitwise ops ----------------===//
//
// Integer arithmetic on ingot.binary_math: Mod (the divisor's sign, or C's
// fmod when fmod = 1, which float inputs need), BitShift (logical, as on
// the unsigned types ONNX allows), BitwiseAnd/Or/Xor, and BitwiseNot as a
// xor with all ones. Narrow integer types arrive widened (OnnxNarrowTypes)
// and wrap back on the way out, which these ops' results survive.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxMathConverters.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// kind(A, B) with broadcasting; both of one of `allowed`.
LogicalResult binary(NodeContext &n, StringRef kind, ArrayRef<Type> allowed) {
  Value a, b;
  if (failed(n.input(0, a)) || failed(n.input(1, b)) ||
      failed(n.requireType(a, "input A", allowed)) ||
      failed(n.requireType(b, "input B (must match A)", {elementTypeOf(a)})))
    return failure();
  return n.setOutput(
      0, n.build<graph::BinaryMathOp>(elementTypeOf(a), a, b,
                                      n.builder().getStringAttr(kind)));
}

SmallVector<Type> integerTypes(NodeContext &n) { return {n.i64(), n.i32()}; }

} // namespace

LogicalResult convertMod(NodeContext &n) {
  const int64_t fmod = n.attrInt("fmod", 0);
  Value a;
  if (n.ctx.hasError() || failed(n.input(0, a)))
    return failure();
  if (fmod != 0 && fmod != 1)
    return n.fail("fmod = " + std::to_string(fmod), "0 or 1");
  if (elementTypeOf(a) == n.f32() && fmod == 0)
    return n.fail("fmod = 0 on float inputs",
                  "fmod = 1 for floats (ONNX requires it)");
  return binary(n, fmod ? "fmod" : "mod", numericTypes(n));
}

LogicalResult convertBitShift(NodeContext &n) {
  const onnx::AttributeProto *dir =
      n.attr("direction", onnx::AttributeProto::STRING);
  if (n.ctx.hasError())
    return failure();
  if (!dir || (dir->s() != "LEFT" && dir->s() != "RIGHT"))
    return n.fail("direction '" + (dir ? dir->s() : std::string()) + "'",
                  "LEFT or RIGHT");
  return binary(n, dir->s() == "LEFT" ? "shift_left" : "shift_right",
                integerTypes(n));
}

LogicalResult convertBitwiseAnd(NodeContext &n) {
  return binary(n, "bitwise_and", integerTypes(n));
}
LogicalResult convertBitwiseOr(NodeContext &n) {
  return binary(n, "bitwise_or", integerTypes(n));
}
LogicalResult convertBitwiseXor(NodeContext &n) {
  return binary(n, "bitwise_xor", integerTypes(n));
}

LogicalResult convertBitwiseNot(NodeContext &n) {
  Value x;
  if (failed(n.input(0, x)) || failed(n.requireType(x, "X", integerTypes(n))))
    return failure();
  Type t = elementTypeOf(x);
  return n.setOutput(0, n.build<graph::BinaryMathOp>(
                            t, x, scalarConstant(n, t, -1.0),
                            n.builder().getStringAttr("bitwise_xor")));
}

} // namespace ingot::compiler::onnximport
