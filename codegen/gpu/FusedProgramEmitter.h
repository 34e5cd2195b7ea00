//===- FusedProgramEmitter.h - A fused program as arith/math ops -*- C++
//-*-===//
#pragma once

#include "ingot/FusedProgram.h"

#include "mlir/IR/Builders.h"

namespace ingot::codegen {

/// Emits the ops computing one element of `program` from one f32 value per
/// input; returns the result. The program must have passed parseProgram.
mlir::Value emitProgram(mlir::OpBuilder &b, mlir::Location loc,
                        const fused::Program &program,
                        mlir::ArrayRef<mlir::Value> inputs);

} // namespace ingot::codegen
