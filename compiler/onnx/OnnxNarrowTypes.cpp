//===- OnnxNarrowTypes.cpp - Computing on the dtypes kernels widen --------===//
//
// ingot's compute kernels work on f32, i64, i32 and bool. Tensors of the
// other ONNX dtypes (int8, int16, uint8..uint64, float16, bfloat16,
// float64) are stored as they are: graph inputs and outputs, weights,
// Cast and data movement keep them. A node that computes on them reads its
// operands widened — cast to i32 (integers of up to 16 bits), i64 (uint32,
// uint64) or f32 (the floats) — and its results are cast back, so integer
// results wrap as ONNX's do. Widening is exact for every integer but
// uint64, which only bit-exact ops accept, and ops that only order values,
// which see it with the sign bit flipped (then it orders as int64 does);
// float64 is computed in float32 precision (docs/supported-ops.md says so).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxImportContext.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

/// Ops whose kernels move or reinterpret elements of any dtype.
bool keepsNarrowTypes(llvm::StringRef opType) {
  static const llvm::StringSet<> ops = {
      "Cast", "CastLike", "Identity", "Reshape", "Flatten", "Squeeze",
      "Unsqueeze", "Transpose", "Concat", "Split", "Slice", "Gather",
      "GatherElements", "ScatterND", "ScatterElements", "Scatter", "Expand",
      "Tile", "Shape", "Size", "DepthToSpace", "SpaceToDepth",
      // Read their 8-bit operands as they are (OnnxQuantOps.cpp).
      "DequantizeLinear", "QuantizeLinear", "DynamicQuantizeLinear",
      "MatMulInteger", "QLinearMatMul", "ConvInteger", "QLinearConv"};
  return ops.contains(opType);
}

/// Ops for which uint64 computed as int64 gives the same bits: wrapping
/// sums and products, equality, selection, shifts and bitwise ops (the
/// kernels shift the unsigned bit pattern).
bool isBitExactOnUint64(llvm::StringRef opType) {
  static const llvm::StringSet<> ops = {
      "Add",        "Sub",       "Mul",        "Sum",        "Equal",
      "Where",      "CumSum",    "ReduceSum",  "ReduceProd", "BitShift",
      "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"};
  return ops.contains(opType);
}

/// Outputs that hold indices or counts (int64), never the data's dtype.
bool isIndexOutput(llvm::StringRef opType, int output) {
  if (opType == "ArgMax" || opType == "ArgMin" || opType == "NonZero")
    return true;
  if (opType == "TopK" || opType == "MaxPool")
    return output == 1;
  return opType == "Unique" && output >= 1;
}

/// The type a kernel computes `t` in; null when it computes `t` natively.
Type computeTypeOf(Type t) {
  Builder b(t.getContext());
  if (t.isF16() || t.isBF16() || t.isF64())
    return b.getF32Type();
  auto i = dyn_cast<IntegerType>(t);
  if (!i || i.getWidth() == 1 ||
      (i.isSignless() && (i.getWidth() == 32 || i.getWidth() == 64)))
    return nullptr;
  return i.getWidth() <= 16 ? b.getI32Type() : b.getI64Type();
}

/// Ops that only order their operands: uint64 with the sign bit flipped
/// orders as int64 does, so they compute on the flipped values.
bool ordersUint64BySignFlip(llvm::StringRef opType) {
  static const llvm::StringSet<> ops = {
      "Less",      "LessOrEqual", "Greater", "GreaterOrEqual", "Min", "Max",
      "ReduceMin", "ReduceMax",   "ArgMin",  "ArgMax",         "TopK"};
  return ops.contains(opType);
}

bool isUint64(Type t) { return t.isUnsignedInteger(64); }

/// x + (-2^63), wrapping: the sign bit of an i64 flipped.
FailureOr<Value> flipSignBit(NodeContext &n, Value x) {
  Type i64 = elementTypeOf(x);
  return n.build<graph::AddOp>(i64, x,
                               scalarConstant(n, i64, -9223372036854775808.0));
}

} // namespace

LogicalResult widenNarrowOperands(NodeContext &n, NarrowTypeWidening &w) {
  w = NarrowTypeWidening();
  if (keepsNarrowTypes(n.opType()))
    return success();
  for (int i = 0; i < n.node.input_size(); ++i) {
    if (!n.hasInput(i))
      continue;
    Type elem = n.ctx.elementTypeOfName(n.node.input(i));
    Type compute = elem ? computeTypeOf(elem) : Type();
    if (!compute)
      continue;
    const bool flip = isUint64(elem) && ordersUint64BySignFlip(n.opType());
    if (isUint64(elem) && !isBitExactOnUint64(n.opType()) && !flip)
      return n.fail("input '" + n.node.input(i) +
                        "' is uint64, which this op would divide or raise "
                        "as int64",
                    "uint64 in Add, Sub, Mul, Sum, Equal, Where, CumSum, "
                    "ReduceSum, ReduceProd, the comparisons, Min, Max, "
                    "ReduceMin, ReduceMax, ArgMin, ArgMax, TopK, Cast and "
                    "data movement");
    Value x;
    if (failed(n.input(i, x)))
      return failure();
    if (!w.storage) {
      w.storage = elem;
      w.compute = compute;
      w.signFlipped = flip;
    }
    FailureOr<Value> wide = n.build<graph::CastOp>(compute, x);
    if (succeeded(wide) && flip)
      wide = flipSignBit(n, *wide);
    if (failed(wide))
      return failure();
    n.overrideInput(i, *wide);
  }
  return success();
}

LogicalResult narrowResults(NodeContext &n, const NarrowTypeWidening &w) {
  if (!w.storage)
    return success();
  for (int i = 0; i < n.node.output_size(); ++i) {
    const std::string &name = n.node.output(i);
    if (name.empty() || !n.ctx.isDefined(name) || isIndexOutput(n.opType(), i))
      continue;
    FailureOr<Value> value = n.ctx.lookup(name);
    if (failed(value))
      return failure();
    if (elementTypeOf(*value) != w.compute)
      continue;
    if (w.signFlipped && failed(value = flipSignBit(n, *value)))
      return failure();
    FailureOr<Value> narrow = n.build<graph::CastOp>(w.storage, *value);
    if (failed(narrow))
      return failure();
    n.ctx.define(name, *narrow);
  }
  return success();
}

} // namespace ingot::compiler::onnximport
