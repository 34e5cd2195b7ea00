//===- IngotDialect.h - The ingot graph dialect -----------------*- C++ -*-===//
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ingot/ShapeRules.h"

#include "dialects/Ingot/IngotDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Ingot/IngotAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Ingot/IngotOps.h.inc"

namespace ingot::graph {

/// A tensor type's dims in ShapeRules form (dynamic dims as kDynamic).
shape::Shape shapeOf(mlir::Type type);

/// Whether `actual` agrees with `inferred` wherever both are static.
bool isCompatibleShape(const shape::Shape &actual,
                       const shape::Shape &inferred);

/// Largest tensor `ingot.constant` may hold inline; larger ones are params.
constexpr int64_t kMaxInlineConstantElements = 4096;

} // namespace ingot::graph
