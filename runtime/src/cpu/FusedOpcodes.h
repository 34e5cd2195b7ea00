//===- FusedOpcodes.h - Opcodes of fused_elementwise over tiles -*- C++ -*-===//
//
// The per-element function of each opcode of ingot/FusedProgram.h, applied
// to a tile. Each is the function its unfused kernel applies (Elementwise.cpp,
// Unary.cpp, MathKernels.cpp, MathF32), so the bits agree.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/FusedProgram.h"

#include <cstdint>
#include <vector>

namespace ingot::cpu {

/// A value of the program within one tile: a tile of floats or one float
/// standing for all of them.
struct Val {
  const float *p = nullptr;
  float s = 0;
  bool scalar = false;
};

/// Runs one instruction over a tile of `n` values (or over one value when
/// every operand is scalar and `n` is 1); `constants` are the program's.
void applyOpcode(const fused::Instruction &ins, Val a, Val b,
                 const std::vector<float> &constants, float *out, int64_t n);

} // namespace ingot::cpu
