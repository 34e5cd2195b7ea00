//===- ElementwiseKernel.h - GPU kernels for elementwise steps --*- C++ -*-===//
//
// The generated (not templated) GPU kernels: a plan step that computes one
// f32 value per output element from its inputs (a `fused_elementwise`
// program without a reduction, or a single elementwise kernel such as `add`
// or `unary_math`) becomes a `gpu.func` built from arith/math ops. The
// function is target-neutral GPU dialect; the CUDA and HIP emitters only
// choose the gpu.module's targets, so both share this builder.
//
// Kernel ABI (what the manifest's GpuArg list describes to the runtime):
//   one pointer per operand, inputs then the output;
//   numel of the output (i64);
//   for a rank-R output with broadcast inputs: the output's R dims, then R
//   element strides per broadcast input (0 along a broadcast axis).
// One thread per output element; grid.x = ceil(numel / block).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Plan/PlanDialect.h"
#include "ingot/FusedProgram.h"

#include "mlir/IR/Builders.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::gpu {
class GPUModuleOp;
}

namespace ingot::codegen {

/// How the runtime computes one kernel argument at launch (the numbers are
/// the manifest's GpuArg kinds, format/include/ingot/Manifest.h).
enum class GpuArgKind : int64_t {
  Pointer = 1,         // device address of operand
  Numel = 2,           // element count of operand
  Dim = 3,             // size of operand's `axis`
  BroadcastStride = 4, // element stride of input operand along output `axis`
  KvKeys = 5,          // device address of layer `axis`'s key cache
  KvValues = 6,        // device address of layer `axis`'s value cache
};

struct GpuArgSpec {
  GpuArgKind kind;
  int64_t operand; // index into the step's inputs, then outputs
  int64_t axis = 0;
};

/// How one input is read: every element, its only element, or through
/// strides the runtime passes (broadcasting, or shapes known only then).
enum class InputAccess { Dense, Scalar, Strided };

/// The program a step computes per element, if it is one this builder
/// generates code for: f32 operands, one output, no reduction.
std::optional<fused::Program> elementwiseProgram(plan::KernelOp step,
                                                 std::string *whyNot);

struct ElementwiseLaunch {
  std::string symbol;
  int64_t blockSize = 0;
  int64_t gridOperand = 0; // grid.x = ceil(numel(operand) / blockSize)
  std::vector<GpuArgSpec> args;
};

/// Adds `gpu.func @symbol` computing `program` for `step` to `module`.
ElementwiseLaunch
buildElementwiseKernel(mlir::OpBuilder &b, mlir::gpu::GPUModuleOp module,
                       plan::KernelOp step, const fused::Program &program,
                       const std::string &symbol, int64_t blockSize);

} // namespace ingot::codegen
