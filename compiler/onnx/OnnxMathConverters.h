//===- OnnxMathConverters.h - Converters of the math family ----*- C++ -*-===//
//
// Private to the math converter files; the table is in OnnxMathOps.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/onnx/OnnxImportContext.h"

namespace ingot::compiler::onnximport {

// OnnxMathNorm.cpp
mlir::LogicalResult convertBatchNormalization(NodeContext &n);
mlir::LogicalResult convertInstanceNormalization(NodeContext &n);
mlir::LogicalResult convertRMSNormalization(NodeContext &n);
mlir::LogicalResult convertSkipLayerNormalization(NodeContext &n);
mlir::LogicalResult convertSimplifiedLayerNormalization(NodeContext &n);
// OnnxMathEinsum.cpp
mlir::LogicalResult convertEinsum(NodeContext &n);

} // namespace ingot::compiler::onnximport
