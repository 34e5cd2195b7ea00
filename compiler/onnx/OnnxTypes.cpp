//===- OnnxTypes.cpp - ONNX dtypes as MLIR element types ------------------===//
//
// Which ONNX TensorProto dtypes the importer maps to which element types,
// and their names in messages.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {
// TensorProto dtypes newer than Debian's onnx-ml.pb.h (ONNX 1.14+); their
// numbers are fixed by the ONNX spec.
enum NewerDataType : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kUInt2 = 25,
  kInt2 = 26,
};
} // namespace

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
  case kFloat8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case kFloat8E4M3FNUZ:
    return b.getType<Float8E4M3FNUZType>();
  case kFloat8E5M2:
    return b.getType<Float8E5M2Type>();
  case kFloat8E5M2FNUZ:
    return b.getType<Float8E5M2FNUZType>();
  case kFloat4E2M1:
    return b.getType<Float4E2M1FNType>();
  case kInt4:
    return b.getIntegerType(4);
  case kUInt4:
    return b.getIntegerType(4, /*isSigned=*/false);
  case kInt2:
    return b.getIntegerType(2);
  case kUInt2:
    return b.getIntegerType(2, /*isSigned=*/false);
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
  if (isa<Float8E4M3FNType>(type))
    return "float8e4m3fn";
  if (isa<Float8E4M3FNUZType>(type))
    return "float8e4m3fnuz";
  if (isa<Float8E5M2Type>(type))
    return "float8e5m2";
  if (isa<Float8E5M2FNUZType>(type))
    return "float8e5m2fnuz";
  if (isa<Float4E2M1FNType>(type))
    return "float4e2m1";
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
