//===- PlanDialect.h - The plan dialect -------------------------*- C++ -*-===//
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Plan/PlanDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Plan/PlanOps.h.inc"
