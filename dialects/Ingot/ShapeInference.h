//===- ShapeInference.h - Result shapes of ingot ops ------------*- C++ -*-===//
//
// One shape function per op, shared by the verifiers, the importer, shape
// propagation (dims may be dynamic) and bound computation (all dims known).
// Small integer tensors (shape vectors) also carry their element values,
// possibly partially known, so Shape -> Gather -> Concat -> Reshape chains
// resolve as far as the known dims allow.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ShapeRules.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <optional>
#include <string>
#include <vector>

namespace ingot::graph {

/// Marks an element of a shape vector whose value is not known.
constexpr int64_t kUnknownValue = INT64_MIN;
/// Integer tensors with at most this many elements carry their values.
constexpr int64_t kMaxTrackedValues = 64;

struct ValueInfo {
  shape::Shape shape;
  /// Row-major element values of a small integer tensor, if tracked.
  std::optional<std::vector<int64_t>> values;
};

/// Computes the info of every result of `op` from its operands' info (one
/// entry per operand, absent optionals omitted as in getOperands()).
/// Fails with a message (no trailing period) on invalid input.
mlir::LogicalResult inferValueInfo(mlir::Operation *op,
                                   llvm::ArrayRef<ValueInfo> operands,
                                   std::vector<ValueInfo> &results,
                                   std::string &error);

/// Shape rules of the coverage ops (ShapeInferenceMath.cpp,
/// ShapeInferenceTensor.cpp): nullopt if `op` is not theirs, else whether
/// the rule succeeded. They set `out` and, for small integer results they
/// can evaluate, `values`.
std::optional<bool> inferMathOp(mlir::Operation *op,
                                llvm::ArrayRef<ValueInfo> ins,
                                shape::Shape &out,
                                std::optional<std::vector<int64_t>> &values,
                                std::string &error);
std::optional<bool> inferTensorOp(mlir::Operation *op,
                                  llvm::ArrayRef<ValueInfo> ins,
                                  shape::Shape &out,
                                  std::optional<std::vector<int64_t>> &values,
                                  std::string &error);
/// The same for the ops fusion passes make (IngotFusedOps.cpp).
std::optional<bool> inferFusedOp(mlir::Operation *op,
                                 llvm::ArrayRef<ValueInfo> ins,
                                 shape::Shape &out,
                                 std::optional<std::vector<int64_t>> &values,
                                 std::string &error);

/// An upper bound for a coverage op whose result dims depend on run-time
/// data (NonZero's count <= numel; a run-time Slice/TopK dim <= the input
/// dim), given its operands at the symbols' maxima; nullopt if none exists.
std::optional<shape::Shape> boundTensorResult(mlir::Operation *op,
                                              llvm::ArrayRef<ValueInfo> ins,
                                              const shape::Shape &inferred);
/// The same for a reduce whose axes come at run time (ShapeInferenceMath.cpp).
std::optional<shape::Shape> boundMathResult(mlir::Operation *op,
                                            llvm::ArrayRef<ValueInfo> ins,
                                            const shape::Shape &inferred);

/// The info the IR states for `value`: its type's shape, and its values
/// when it is produced by an integer `ingot.constant`.
ValueInfo valueInfoFromIR(mlir::Value value);
/// Whether values of `type` are tracked: i32 and i64 (shape vectors,
/// indices) and bool (0/1, masks of shape arithmetic).
bool isTrackedTensor(mlir::Type type);

} // namespace ingot::graph
