//===- ShapeInferenceWindow.h - Convolution, pooling, resize rules -*- C++
//-*-===//
//
// Shape rules of the tensor-family ops whose output dims come from sliding
// windows, resampling or block shuffles, used by ShapeInferenceTensor.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"

namespace ingot::graph {

/// a * b, or dynamic if either is.
inline int64_t mulDims(int64_t a, int64_t b) {
  return a == shape::kDynamic || b == shape::kDynamic ? shape::kDynamic : a * b;
}

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
/// Conv, ConvTranspose, LSTM/GRU, the pools, Resize, DepthToSpace and
/// SpaceToDepth: nullopt if `op` is none of them.
std::optional<bool> inferWindowedOp(mlir::Operation *op,
                                    llvm::ArrayRef<ValueInfo> ins,
                                    shape::Shape &out, std::string &error);

} // namespace ingot::graph
