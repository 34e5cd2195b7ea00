//===- PlanDialect.cpp - The plan dialect ---------------------------------===//
#include "dialects/Plan/PlanDialect.h"

#include "ingot/KernelTable.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace ingot::plan;

#include "dialects/Plan/PlanDialect.cpp.inc"

void PlanDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Plan/PlanOps.cpp.inc"
      >();
}

LogicalResult ConstantOp::verify() {
  auto memref = cast<MemRefType>(getResult().getType());
  auto value = cast<ShapedType>(getValue().getType());
  if (memref.getShape() != value.getShape() ||
      memref.getElementType() != value.getElementType())
    return emitOpError("value type ") << value << " does not match " << memref;
  return success();
}

LogicalResult AllocOp::verify() {
  auto type = cast<MemRefType>(getResult().getType());
  ArrayRef<int64_t> bound = getMaxShape();
  if (bound.size() != static_cast<size_t>(type.getRank()))
    return emitOpError("max_shape has ")
           << bound.size() << " dims but the buffer has rank "
           << type.getRank();
  for (auto [dim, max] : llvm::zip(type.getShape(), bound)) {
    if (max < -1 || (max == -1 && !ShapedType::isDynamic(dim)))
      return emitOpError("max_shape entries must be non-negative, or -1 for "
                         "a dynamic dim sized at run time");
    if (!ShapedType::isDynamic(dim) && dim != max)
      return emitOpError("max_shape ") << max << " disagrees with static dim "
                                        << dim;
  }
  if (getOffset() && isSizedAtRunTime())
    return emitOpError("is sized at run time and cannot have an arena offset");
  if (getOffset() && (static_cast<int64_t>(*getOffset()) < 0 ||
                     *getOffset() % 64 != 0))
    return emitOpError("offset must be a non-negative multiple of 64");
  return success();
}

uint64_t AllocOp::getMaxBytes() {
  auto type = cast<MemRefType>(getResult().getType());
  if (isSizedAtRunTime())
    return 0;
  uint64_t elements = 1;
  for (int64_t d : getMaxShape())
    elements *= static_cast<uint64_t>(d);
  // Bool and the 2- and 4-bit types (int4, float4, ...) take a byte each.
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return elements * ((bits + 7) / 8);
}

bool AllocOp::isSizedAtRunTime() {
  return llvm::is_contained(getMaxShape(), int64_t(-1));
}

LogicalResult KernelOp::verify() {
  if (getKernel().empty())
    return emitOpError("kernel name must not be empty");
  // Only control-flow kernels (skip, skip_unless) write nothing.
  const ingot::KernelSpec *spec = ingot::findKernelSpec(
      std::string_view(getKernel().data(), getKernel().size()));
  if (getOuts().empty() && !(spec && spec->sig.control))
    return emitOpError("needs at least one output buffer");
  for (Value in : getIns())
    if (!isa<MemRefType, NoneType>(in.getType()))
      return emitOpError("inputs must be memrefs or plan.none");
  for (Value out : getOuts())
    if (!out.getDefiningOp<AllocOp>())
      return emitOpError("outputs must be plan.alloc buffers");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Plan/PlanOps.cpp.inc"
