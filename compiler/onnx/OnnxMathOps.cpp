//===- OnnxMathOps.cpp - Math, reduction and normalisation converters -----===//
#include "compiler/onnx/OnnxImportContext.h"

namespace ingot::compiler::onnximport {

llvm::ArrayRef<OpConverter> mathOpConverters() { return {}; }

} // namespace ingot::compiler::onnximport
