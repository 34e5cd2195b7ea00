//===- OnnxTensorOps.h - Shared by the tensor-family converters -*- C++ -*-===//
//
// Private to OnnxTensorOps.cpp and OnnxTensorNnOps.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/onnx/OnnxImportContext.h"

namespace ingot::compiler::onnximport {

/// A 1-D i64 `ingot.constant` at the builder's insertion point.
mlir::Value tensorI64Constant(NodeContext &n, llvm::ArrayRef<int64_t> values);
int64_t rankOf(mlir::Value v);

mlir::LogicalResult convertTopK(NodeContext &n);
mlir::LogicalResult convertConv(NodeContext &n);
mlir::LogicalResult convertMaxPool(NodeContext &n);
mlir::LogicalResult convertAveragePool(NodeContext &n);
mlir::LogicalResult convertGlobalAveragePool(NodeContext &n);
mlir::LogicalResult convertResize(NodeContext &n);

} // namespace ingot::compiler::onnximport
