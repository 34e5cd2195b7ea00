//===- ShapeInferenceTensor.h - Tensor family rules, shared -----*- C++ -*-===//
//
// Internal to the shape rules (ShapeInference*.cpp); the tensor family's
// entry point is inferTensorOp. The value rules are in TrackedValues.cpp.
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

/// Elementwise integer add/sub/mul/div of tracked values (scalar or same
/// size), per `op`'s kind.
std::optional<std::vector<int64_t>>
foldIntBinary(mlir::Operation *op, const ValueInfo &a, const ValueInfo &b);
/// Elementwise compare (`kind` as ingot.compare's: 0/1 values), max/min
/// (as ingot.binary_math's) and select of tracked values, scalar or same
/// size; unknown inputs give unknown elements.
std::optional<std::vector<int64_t>> foldCompareOrMinMax(llvm::StringRef kind,
                                                        const ValueInfo &a,
                                                        const ValueInfo &b);
std::optional<std::vector<int64_t>>
foldWhere(const ValueInfo &c, const ValueInfo &x, const ValueInfo &y);
/// -x (wrapping) of tracked integers, or !x of tracked bools (`logical`):
/// exporters negate axes and shape tests.
std::optional<std::vector<int64_t>> foldNegate(const ValueInfo &x,
                                               bool logical);
/// The values of a transpose by `perm` of a fully tracked tensor.
std::optional<std::vector<int64_t>>
transposeValues(const shape::Shape &in, const std::vector<int64_t> &perm,
                const std::optional<std::vector<int64_t>> &values);
/// The values of a slice of a fully tracked tensor: output index i reads
/// input index firsts + i * steps, per dim.
std::optional<std::vector<int64_t>>
sliceValues(const shape::Shape &in, const shape::Shape &out,
            const std::vector<int64_t> &firsts,
            const std::vector<int64_t> &steps,
            const std::optional<std::vector<int64_t>> &values);

/// GatherElements, ScatterND, TopK, OneHot, NonZero: nullopt if `op` is
/// none of them, else whether the rule succeeded.
std::optional<bool> inferIndexingOp(mlir::Operation *op,
                                    llvm::ArrayRef<ValueInfo> ins,
                                    shape::Shape &out, std::string &error);

/// Gather, Shape, ConstantOfShape (ShapeInferenceShapeVector.cpp): nullopt
/// if `op` is none of them, else whether the rule succeeded.
std::optional<bool>
inferShapeVectorOp(mlir::Operation *op, llvm::ArrayRef<ValueInfo> ins,
                   const std::vector<shape::Shape> &shapes, shape::Shape &out,
                   std::optional<std::vector<int64_t>> &values,
                   std::string &error);

} // namespace ingot::graph
