//===- Passes.h - ingot's compiler passes -----------------------*- C++ -*-===//
#pragma once

#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Plan/PlanDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace ingot {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace ingot
