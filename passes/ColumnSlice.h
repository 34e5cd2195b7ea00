//===- ColumnSlice.h - Last-axis slices the fusion passes make --*- C++ -*-===//
//
// ingot-merge-linears splits a merged projection back into its parts with
// `ingot.slice` over the last axis; ingot-merge-linears (silu_mul) and
// ingot-fuse-rope-attention (attention offsets) recognise those slices so
// the consumers read the merged tensor in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Ingot/IngotDialect.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace ingot {

struct ColumnSlice {
  mlir::Value source;
  int64_t begin = 0, end = 0; // columns [begin, end) of source's last dim
};

/// `v` as a step-1 slice of its source's last (static) dim with constant
/// bounds inside it; nullopt for anything else.
std::optional<ColumnSlice> matchColumnSlice(mlir::Value v);

/// Columns [begin, end) of `source` (a rank >= 1 tensor whose last dim is
/// static) as an `ingot.slice` with constant operands, of type `type`.
mlir::Value makeColumnSlice(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value source, int64_t begin, int64_t end,
                            mlir::Type type);

} // namespace ingot
