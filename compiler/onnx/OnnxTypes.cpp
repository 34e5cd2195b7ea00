//===- OnnxTypes.cpp - ONNX dtypes as MLIR element types ------------------===//
//
// Which ONNX TensorProto dtypes the importer maps to which element types,
// and their names in messages.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

using namespace mlir;

namespace ingot::compiler::onnximport {

Type elementTypeOf(MLIRContext *ctx, int32_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  default:
    return nullptr;
  }
}

Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

std::string typeName(Type type) {
  if (type.isF32())
    return "float32";
  if (type.isF16())
    return "float16";
  if (type.isBF16())
    return "bfloat16";
  if (type.isF64())
    return "float64";
  if (type.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(type))
    return (i.isUnsigned() ? "uint" : "int") + std::to_string(i.getWidth());
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

} // namespace ingot::compiler::onnximport
