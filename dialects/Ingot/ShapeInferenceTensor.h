//===- ShapeInferenceTensor.h - Tensor family rules, shared -----*- C++ -*-===//
//
// Internal to the tensor family's shape rules (ShapeInferenceTensor.cpp,
// ShapeInferenceIndexing.cpp); the entry point is inferTensorOp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Ingot/ShapeInference.h"

namespace ingot::graph {

/// Whether `v` is tracked and every entry of it is known.
inline bool allValuesKnown(const std::optional<std::vector<int64_t>> &v) {
  if (!v)
    return false;
  for (int64_t x : *v)
    if (x == kUnknownValue)
      return false;
  return true;
}

/// GatherElements, ScatterND, TopK, OneHot, NonZero: nullopt if `op` is
/// none of them, else whether the rule succeeded.
std::optional<bool> inferIndexingOp(mlir::Operation *op,
                                    llvm::ArrayRef<ValueInfo> ins,
                                    shape::Shape &out, std::string &error);

} // namespace ingot::graph
