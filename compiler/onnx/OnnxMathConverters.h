//===- OnnxMathConverters.h - Converters of the math family ----*- C++ -*-===//
//
// Private to the math converter files; the table is in OnnxMathOps.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/onnx/OnnxImportContext.h"

namespace ingot::compiler::onnximport {

/// f32 always; with `ints`, int64 and int32 as well.
inline llvm::SmallVector<mlir::Type> numericTypes(NodeContext &n,
                                                  bool ints = true) {
  llvm::SmallVector<mlir::Type> t = {n.f32()};
  if (ints)
    t.append({n.i64(), n.i32()});
  return t;
}

// OnnxMathReduce.cpp
/// Any Reduce* as ingot.reduce of `kind`; `ints` admits integer inputs,
/// `axesInputFrom` is the opset that moved `axes` to an input.
mlir::LogicalResult convertReduceKind(NodeContext &n, llvm::StringRef kind,
                                      bool ints, int64_t axesInputFrom);
mlir::LogicalResult convertReduceSum(NodeContext &n);
mlir::LogicalResult convertReduceMax(NodeContext &n);
mlir::LogicalResult convertReduceMin(NodeContext &n);
mlir::LogicalResult convertReduceProd(NodeContext &n);
mlir::LogicalResult convertReduceL2(NodeContext &n);
mlir::LogicalResult convertReduceSumSquare(NodeContext &n);
mlir::LogicalResult convertReduceLogSumExp(NodeContext &n);
mlir::LogicalResult convertArgMax(NodeContext &n);
mlir::LogicalResult convertArgMin(NodeContext &n);
mlir::LogicalResult convertLogSoftmax(NodeContext &n);
mlir::LogicalResult convertCumSum(NodeContext &n);
// OnnxMathNorm.cpp
mlir::LogicalResult convertBatchNormalization(NodeContext &n);
mlir::LogicalResult convertInstanceNormalization(NodeContext &n);
mlir::LogicalResult convertGroupNormalization(NodeContext &n);
mlir::LogicalResult convertLRN(NodeContext &n);
mlir::LogicalResult convertRMSNormalization(NodeContext &n);
mlir::LogicalResult convertSkipLayerNormalization(NodeContext &n);
mlir::LogicalResult convertSimplifiedLayerNormalization(NodeContext &n);
// OnnxQuantOps.cpp
mlir::LogicalResult convertDequantizeLinear(NodeContext &n);
mlir::LogicalResult convertQuantizeLinear(NodeContext &n);
mlir::LogicalResult convertDynamicQuantizeLinear(NodeContext &n);
/// clamp(round(x / scale) + zp, lo, hi) cast to the 8/16-bit `target`.
mlir::FailureOr<mlir::Value> quantize(NodeContext &n, mlir::Value x,
                                      mlir::Value scale, mlir::Value zpF32,
                                      mlir::Type target);
// OnnxQuantMatMul.cpp
mlir::LogicalResult convertMatMulInteger(NodeContext &n);
mlir::LogicalResult convertQLinearMatMul(NodeContext &n);
/// Fails unless both operands are uint8 or int8.
mlir::LogicalResult requireInteger8(NodeContext &n, mlir::Value a,
                                    mlir::Value b);
/// v as element type t (v itself when it already is).
mlir::FailureOr<mlir::Value> castTo(NodeContext &n, mlir::Value v,
                                    mlir::Type t);
/// A scale or zero point laid out to broadcast against a tensor of rank
/// `rank`: one value as it is, one per element of `axis` as [C, 1, ...].
mlir::FailureOr<mlir::Value> alongAxis(NodeContext &n, mlir::Value param,
                                       const char *role, int64_t axis,
                                       int64_t rank);
/// saturate(round(acc * (a_scale * b_scale / y_scale)) + y_zp) as
/// `target` (QLinearMatMul's and QLinearConv's output).
mlir::FailureOr<mlir::Value> requantize(NodeContext &n, mlir::Value acc,
                                        mlir::Value as, mlir::Value bs,
                                        mlir::Value ys, mlir::Value yzp,
                                        mlir::Type target);
// OnnxQuantConv.cpp
mlir::LogicalResult convertConvInteger(NodeContext &n);
mlir::LogicalResult convertQLinearConv(NodeContext &n);
// OnnxBitwise.cpp
mlir::LogicalResult convertMod(NodeContext &n);
mlir::LogicalResult convertBitShift(NodeContext &n);
mlir::LogicalResult convertBitwiseAnd(NodeContext &n);
mlir::LogicalResult convertBitwiseOr(NodeContext &n);
mlir::LogicalResult convertBitwiseXor(NodeContext &n);
mlir::LogicalResult convertBitwiseNot(NodeContext &n);
// OnnxMathEinsum.cpp
mlir::LogicalResult convertEinsum(NodeContext &n);

} // namespace ingot::compiler::onnximport
