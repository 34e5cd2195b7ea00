//===- OnnxTensorOps.h - Shared by the tensor-family converters -*- C++ -*-===//
//
// Private to the tensor-family converters (OnnxTensorOps.cpp, OnnxSplit.cpp,
// OnnxTensorNnOps.cpp, OnnxDetection.cpp and the files beside them).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/onnx/OnnxImportContext.h"

namespace ingot::compiler::onnximport {

int64_t rankOf(mlir::Value v);
/// Pad (OnnxPad.cpp).
mlir::LogicalResult convertPad(NodeContext &n);
/// String attribute `name`, or `dflt` when absent.
std::string attrStr(NodeContext &n, const char *name, const char *dflt);
/// Fails unless x is an f32 [N, C, d1 (, d2 (, d3))] tensor.
mlir::LogicalResult requireSpatial(NodeContext &n, mlir::Value x);
/// Input 0 of a node that only selects or copies values (MaxPool, nearest
/// Resize) when the model stores it in 8 bits: the int32 it was widened to
/// (OnnxNarrowTypes.cpp) cast to f32, exact for those values; the caller
/// casts its result back to int32 when `eightBit`.
mlir::LogicalResult eightBitAsF32(NodeContext &n, mlir::Value &x,
                                  bool &eightBit);
/// strides/pads/dilations of a node over `nd` spatial dims, defaults
/// filled in, and a checked auto_pad.
mlir::LogicalResult windowAttrs(NodeContext &n, size_t nd,
                                std::vector<int64_t> &strides,
                                std::vector<int64_t> &pads,
                                std::vector<int64_t> &dilations,
                                std::string &autoPad);

/// A compile-time scalar as double (float or integer constant).
std::optional<double> constantScalar(NodeContext &n, mlir::Value v);

mlir::LogicalResult convertSplit(NodeContext &n);
mlir::LogicalResult convertTopK(NodeContext &n);
mlir::LogicalResult convertConv(NodeContext &n);
mlir::LogicalResult convertConvTranspose(NodeContext &n);
mlir::LogicalResult convertLstm(NodeContext &n);
mlir::LogicalResult convertGru(NodeContext &n);
mlir::LogicalResult convertMaxPool(NodeContext &n);
mlir::LogicalResult convertAveragePool(NodeContext &n);
mlir::LogicalResult convertGlobalAveragePool(NodeContext &n);
mlir::LogicalResult convertGlobalMaxPool(NodeContext &n);
mlir::LogicalResult convertResize(NodeContext &n);
mlir::LogicalResult convertUpsample(NodeContext &n);
mlir::LogicalResult convertNonMaxSuppression(NodeContext &n);
mlir::LogicalResult convertGatherElements(NodeContext &n);
mlir::LogicalResult convertScatterND(NodeContext &n);
mlir::LogicalResult convertScatterElements(NodeContext &n);

} // namespace ingot::compiler::onnximport
