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
mlir::LogicalResult convertRMSNormalization(NodeContext &n);
mlir::LogicalResult convertSkipLayerNormalization(NodeContext &n);
mlir::LogicalResult convertSimplifiedLayerNormalization(NodeContext &n);
// OnnxQuantOps.cpp
mlir::LogicalResult convertDequantizeLinear(NodeContext &n);
mlir::LogicalResult convertQuantizeLinear(NodeContext &n);
mlir::LogicalResult convertDynamicQuantizeLinear(NodeContext &n);
mlir::LogicalResult convertMatMulInteger(NodeContext &n);
mlir::LogicalResult convertQLinearMatMul(NodeContext &n);
// OnnxMathEinsum.cpp
mlir::LogicalResult convertEinsum(NodeContext &n);

} // namespace ingot::compiler::onnximport
