//===- VerifierUtil.h - Helpers shared by the op verifiers -----*- C++ -*-===//
//
// Element-type and shape-rule checks used by IngotOps.cpp, IngotMathOps.cpp
// and IngotTensorOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_DIALECTS_INGOT_VERIFIERUTIL_H
#define INGOT_DIALECTS_INGOT_VERIFIERUTIL_H

#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace ingot::graph {

/// The element type of a shaped value.
inline mlir::Type elementType(mlir::Value v) {
  return mlir::cast<mlir::ShapedType>(v.getType()).getElementType();
}

/// An 8-bit zero point `zp` (if given) of operand type `want`: one value,
/// or one per `perWhat` when `per` is a static count.
inline mlir::LogicalResult verifyZeroPoint(mlir::Operation *op, mlir::Value zp,
                                           mlir::Type want, int64_t per,
                                           const char *perWhat) {
  if (!zp)
    return mlir::success();
  if (elementType(zp) != want)
    return op->emitOpError("zero point type ")
           << elementType(zp) << " differs from its operand's " << want;
  // A zero point with dynamic dims is checked by the kernel.
  shape::Shape s = shapeOf(zp.getType());
  int64_t n = shape::numElements(s);
  if (n != 1 && n != shape::kDynamic &&
      !(s.size() == 1 && per != shape::kDynamic && s[0] == per))
    return op->emitOpError("zero point of shape ")
           << shape::toString(s) << ": expected one value"
           << (per != shape::kDynamic ? std::string(" or one per ") + perWhat
                                      : std::string());
  return mlir::success();
}

/// The result type must be compatible with what the shape rule infers.
inline mlir::LogicalResult verifyShapeRule(mlir::Operation *op) {
  std::vector<ValueInfo> ins, outs;
  for (mlir::Value v : op->getOperands())
    ins.push_back(valueInfoFromIR(v));
  std::string error;
  if (mlir::failed(inferValueInfo(op, ins, outs, error)))
    return op->emitOpError(error);
  shape::Shape actual = shapeOf(op->getResult(0).getType());
  if (!isCompatibleShape(actual, outs[0].shape))
    return op->emitOpError("result shape ")
           << shape::toString(actual) << " does not match the inferred "
           << shape::toString(outs[0].shape);
  return mlir::success();
}

/// Each of `values` must have the result's element type.
inline mlir::LogicalResult verifySameElementType(mlir::Operation *op,
                                                 mlir::ValueRange values) {
  mlir::Type want = elementType(op->getResult(0));
  for (mlir::Value v : values)
    if (elementType(v) != want)
      return op->emitOpError("element types must match the result's, got ")
             << elementType(v) << " and " << want;
  return mlir::success();
}

/// `v` must be a floating-point tensor.
inline mlir::LogicalResult verifyFloat(mlir::Operation *op, mlir::Value v) {
  if (!mlir::isa<mlir::FloatType>(elementType(v)))
    return op->emitOpError("expects a floating-point tensor, got ")
           << v.getType();
  return mlir::success();
}

} // namespace ingot::graph

#endif // INGOT_DIALECTS_INGOT_VERIFIERUTIL_H
