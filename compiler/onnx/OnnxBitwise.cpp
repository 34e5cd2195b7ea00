//===- OnnxBitwise.cpp - Mod, BitShift and the Bitwise ops ----------------===//
//
// Integer arithmetic on ingot.binary_math: Mod (the divisor's sign, or C's
// fmod when fmod = 1; floats take fmod = 0 from opset 28), BitShift
// (logical on unsigned types, arithmetic right shifts on the signed ones
// opset 28 allows), BitwiseAnd/Or/Xor, and BitwiseNot as a xor with all
// ones. Narrow integer types arrive widened (OnnxNarrowTypes)
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
  // Opset 28 defines fmod = 0 on floats (floor division's remainder);
  // before it, float inputs had to say fmod = 1.
  if (elementTypeOf(a) == n.f32() && fmod == 0 && n.opset() < 28)
    return n.fail("fmod = 0 on float inputs at opset " +
                      std::to_string(n.opset()),
                  "fmod = 1 for floats (fmod = 0 on floats needs opset 28)");
  return binary(n, fmod ? "fmod" : "mod", numericTypes(n));
}

/// Opset 28's signed right shift is arithmetic: with s the sign mask of x
/// (0 or -1, from its top bit), x >> y = ((x ^ s) >>> y) ^ s on the logical
/// shift the kernel has. Over-wide or negative shifts then give s, as the
/// spec asks (the kernel's >>> gives 0); narrow types arrive sign-extended,
/// so their top bit is the sign too.
LogicalResult arithmeticShiftRight(NodeContext &n) {
  Value x, y;
  if (failed(n.input(0, x)) || failed(n.input(1, y)) ||
      failed(n.requireType(x, "input X", integerTypes(n))) ||
      failed(n.requireType(y, "input Y (must match X)", {elementTypeOf(x)})))
    return failure();
  Type t = elementTypeOf(x);
  auto kind = [&](StringRef k) { return n.builder().getStringAttr(k); };
  const double topBit = double(t.getIntOrFloatBitWidth() - 1);
  FailureOr<Value> top = n.build<graph::BinaryMathOp>(
      t, x, scalarConstant(n, t, topBit), kind("shift_right"));
  if (failed(top))
    return failure();
  FailureOr<Value> sign =
      n.build<graph::SubOp>(t, scalarConstant(n, t, 0.0), *top);
  if (failed(sign))
    return failure();
  FailureOr<Value> flipped =
      n.build<graph::BinaryMathOp>(t, x, *sign, kind("bitwise_xor"));
  if (failed(flipped))
    return failure();
  FailureOr<Value> shifted =
      n.build<graph::BinaryMathOp>(t, *flipped, y, kind("shift_right"));
  if (failed(shifted))
    return failure();
  return n.setOutput(
      0, n.build<graph::BinaryMathOp>(t, *shifted, *sign, kind("bitwise_xor")));
}

LogicalResult convertBitShift(NodeContext &n) {
  const onnx::AttributeProto *dir =
      n.attr("direction", onnx::AttributeProto::STRING);
  if (n.ctx.hasError())
    return failure();
  if (!dir || (dir->s() != "LEFT" && dir->s() != "RIGHT"))
    return n.fail("direction '" + (dir ? dir->s() : std::string()) + "'",
                  "LEFT or RIGHT");
  // Signed types (opset 28) shift right arithmetically; a left shift drops
  // the bits past the top the same way for both.
  Type declared = n.ctx.elementTypeOfName(n.node.input(0));
  if (dir->s() == "RIGHT" && declared && !declared.isUnsignedInteger())
    return arithmeticShiftRight(n);
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
