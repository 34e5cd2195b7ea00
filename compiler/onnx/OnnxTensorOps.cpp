//===- OnnxTensorOps.cpp - Data movement and convolution converters -------===//
#include "compiler/onnx/OnnxImportContext.h"

namespace ingot::compiler::onnximport {

llvm::ArrayRef<OpConverter> tensorOpConverters() { return {}; }

} // namespace ingot::compiler::onnximport
