//===- ShapeInferenceWindow.h - Convolution, pooling, resize rules -*- C++ -*-===//
//
// Shape rules of the tensor-family ops whose output dims come from sliding
// windows or resampling, shared by ShapeInferenceTensor.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"

namespace ingot::graph {

bool inferPool(mlir::Operation *op, llvm::ArrayRef<int64_t> kernel,
               llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> pads,
               llvm::ArrayRef<int64_t> dilations, llvm::StringRef autoPad,
               bool ceilMode, const shape::Shape &in, shape::Shape &out,
               std::string &error);
bool inferLstm(LstmOp op, llvm::ArrayRef<ValueInfo> ins, shape::Shape &out,
               std::string &error);
bool inferGru(GruOp op, llvm::ArrayRef<ValueInfo> ins, shape::Shape &out,
              std::string &error);
bool inferConvTranspose(ConvTransposeOp op, llvm::ArrayRef<ValueInfo> ins,
                        shape::Shape &out, std::string &error);
/// ConvOp and ConvIntegerOp (the same window attributes).
template <typename ConvLike>
bool inferConv(ConvLike op, llvm::ArrayRef<ValueInfo> ins, shape::Shape &out,
               std::string &error);
bool inferResize(ResizeOp op, llvm::ArrayRef<ValueInfo> ins, shape::Shape &out,
                 std::string &error);

} // namespace ingot::graph
