//===- KernelCost.h - Bytes and FLOPs of one kernel call --------*- C++ -*-===//
//
// The profiler divides these estimates by a kernel's wall time to say how
// close it came to the machine's memory-bandwidth and FLOP ceilings. They
// are first-order models from the step's kernel name and the operands' run
// time shapes and dtypes (every operand read once, every result written
// once, no cache effects): good enough to rank kernels and to tell a
// bandwidth-bound kernel from a compute-bound one, not a cycle count.
// Small operands that stay in cache between kernels (residual adds, norms
// at decode) can show more "GB/s" than the DRAM read ceiling: the bytes
// are real, they just did not come from memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ingot::cpu {
class KernelContext;
} // namespace ingot::cpu

namespace ingot {

struct KernelCost {
  double bytes = 0; // read + written
  double flops = 0; // floating-point operations (an FMA counts 2)
};

/// Estimates the cost of the call described by `ctx` after its kernel has
/// run (output shapes set). Unknown kernels get the default rule: every
/// input and output byte once, no FLOPs.
KernelCost estimateKernelCost(const cpu::KernelContext &ctx);

} // namespace ingot
