//===- FusedProgram.h - The program of a fused elementwise step -*- C++ -*-===//
//
// `ingot.fused_elementwise` (compiler) and the `fused_elementwise` kernel
// (runtime) share one encoding, parsed and checked here so both reject the
// same malformed programs with the same words:
//
//   ops        space-separated opcodes, one per instruction (one string, as
//              the manifest has no string-list attribute)
//   args       two i64 per instruction. A value ref r < numInputs is input
//              r; r >= numInputs is the result of instruction r - numInputs,
//              which must come earlier. The second arg of a unary opcode is
//              -1; `const` and the alpha/beta of `leaky_relu`, `elu`,
//              `hard_sigmoid` index `constants` instead of naming a value.
//   constants  f64 values, used as f32.
//
// The result is the last instruction's. Every opcode computes exactly what
// the unfused kernel of the same name computes (docs/kernels.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::fused {

enum class Opcode : uint8_t {
  // Binary, numpy broadcasting (the `add` ... `pow` kernels, binary_math).
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Max,
  Min,
  // Unary (the unary kernels and unary_math's float kinds).
  Neg,
  Exp,
  Log,
  Sqrt,
  Tanh,
  Sigmoid,
  Erf,
  Relu,
  Abs,
  Reciprocal,
  Softplus,
  Mish,
  Sin,
  Cos,
  Floor,
  Ceil,
  Round,
  Sign,
  // GELU as the `gelu` kernel computes it (exact, and the tanh form).
  Gelu,
  GeluTanh,
  // The operand is an int32 input of the step (its bits as the kernel
  // reads them), converted to f32 as `cast` converts: an int32 producer
  // such as matmul_integer feeds the region directly.
  FromI32,
  // Unary with constants: alpha = constants[b] (and beta = constants[b + 1]).
  LeakyRelu,
  Elu,
  HardSigmoid,
  // constants[a], broadcast.
  Const,
};

/// How an opcode reads its two args.
enum class OperandKind : uint8_t { Unary, Binary, Param1, Param2, Const };

struct Instruction {
  Opcode op;
  int64_t a = -1, b = -1;
};

struct Program {
  int64_t numInputs = 0;
  std::vector<Instruction> code;
  std::vector<float> constants;
};

/// The opcode's name in `ops`.
const char *opcodeName(Opcode op);
OperandKind operandKind(Opcode op);

/// Parses and checks a program over `numInputs` inputs; false with *error
/// set (no trailing period) on an unknown opcode, a wrong number of args, a
/// ref to a value not yet defined or a constant index out of range.
bool parseProgram(std::string_view ops, const std::vector<int64_t> &args,
                  const std::vector<double> &constants, int64_t numInputs,
                  Program *out, std::string *error);

/// Checks `p` against its inputs' kinds (`isI32[i]`: input i holds int32,
/// else f32): every from_i32 reads an int32 input, and an int32 input is
/// read by from_i32 alone. False with *error set otherwise.
bool checkInputKinds(const Program &p, const std::vector<bool> &isI32,
                     std::string *error);

} // namespace ingot::fused
