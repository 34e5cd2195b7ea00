//===- FusedProgram.cpp - Parse and check fused elementwise programs ------===//
#include "ingot/FusedProgram.h"

#include <array>

namespace ingot::fused {
namespace {

struct OpcodeInfo {
  Opcode op;
  const char *name;
  OperandKind kind;
};

constexpr std::array<OpcodeInfo, 32> kOpcodes = {{
    {Opcode::Add, "add", OperandKind::Binary},
    {Opcode::Sub, "sub", OperandKind::Binary},
    {Opcode::Mul, "mul", OperandKind::Binary},
    {Opcode::Div, "div", OperandKind::Binary},
    {Opcode::Pow, "pow", OperandKind::Binary},
    {Opcode::Max, "max", OperandKind::Binary},
    {Opcode::Min, "min", OperandKind::Binary},
    {Opcode::Neg, "neg", OperandKind::Unary},
    {Opcode::Exp, "exp", OperandKind::Unary},
    {Opcode::Log, "log", OperandKind::Unary},
    {Opcode::Sqrt, "sqrt", OperandKind::Unary},
    {Opcode::Tanh, "tanh", OperandKind::Unary},
    {Opcode::Sigmoid, "sigmoid", OperandKind::Unary},
    {Opcode::Erf, "erf", OperandKind::Unary},
    {Opcode::Relu, "relu", OperandKind::Unary},
    {Opcode::Abs, "abs", OperandKind::Unary},
    {Opcode::Reciprocal, "reciprocal", OperandKind::Unary},
    {Opcode::Softplus, "softplus", OperandKind::Unary},
    {Opcode::Mish, "mish", OperandKind::Unary},
    {Opcode::Sin, "sin", OperandKind::Unary},
    {Opcode::Cos, "cos", OperandKind::Unary},
    {Opcode::Floor, "floor", OperandKind::Unary},
    {Opcode::Ceil, "ceil", OperandKind::Unary},
    {Opcode::Round, "round", OperandKind::Unary},
    {Opcode::Sign, "sign", OperandKind::Unary},
    {Opcode::Gelu, "gelu", OperandKind::Unary},
    {Opcode::GeluTanh, "gelu_tanh", OperandKind::Unary},
    {Opcode::FromI32, "from_i32", OperandKind::Unary},
    {Opcode::LeakyRelu, "leaky_relu", OperandKind::Param1},
    {Opcode::Elu, "elu", OperandKind::Param1},
    {Opcode::HardSigmoid, "hard_sigmoid", OperandKind::Param2},
    {Opcode::Const, "const", OperandKind::Const},
}};

const OpcodeInfo *findOpcode(std::string_view name) {
  for (const OpcodeInfo &info : kOpcodes)
    if (name == info.name)
      return &info;
  return nullptr;
}

/// Splits on spaces, dropping empty pieces.
std::vector<std::string_view> splitWords(std::string_view s) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(' ', pos);
    if (end == std::string_view::npos)
      end = s.size();
    if (end > pos)
      words.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

} // namespace

const char *opcodeName(Opcode op) {
  for (const OpcodeInfo &info : kOpcodes)
    if (info.op == op)
      return info.name;
  return "?";
}

OperandKind operandKind(Opcode op) {
  for (const OpcodeInfo &info : kOpcodes)
    if (info.op == op)
      return info.kind;
  return OperandKind::Unary;
}

bool parseProgram(std::string_view ops, const std::vector<int64_t> &args,
                  const std::vector<double> &constants, int64_t numInputs,
                  Program *out, std::string *error) {
  std::vector<std::string_view> words = splitWords(ops);
  if (words.empty()) {
    *error = "the program has no instructions";
    return false;
  }
  if (args.size() != 2 * words.size()) {
    *error = "args has " + std::to_string(args.size()) +
             " entries; expected 2 per instruction (" +
             std::to_string(2 * words.size()) + ")";
    return false;
  }
  out->numInputs = numInputs;
  out->code.clear();
  out->constants.assign(constants.begin(), constants.end());
  const int64_t numConstants = static_cast<int64_t>(constants.size());
  for (size_t i = 0; i < words.size(); ++i) {
    std::string where = "instruction " + std::to_string(i) + " ('" +
                        std::string(words[i]) + "')";
    const OpcodeInfo *info = findOpcode(words[i]);
    if (!info) {
      *error = "unknown opcode '" + std::string(words[i]) +
               "' at instruction " + std::to_string(i);
      return false;
    }
    Instruction ins{info->op, args[2 * i], args[2 * i + 1]};
    const int64_t defined = numInputs + static_cast<int64_t>(i);
    auto checkRef = [&](int64_t ref) {
      if (ref >= 0 && ref < defined)
        return true;
      *error = where + " refers to value " + std::to_string(ref) + ", but " +
               std::to_string(defined) + " are defined before it (" +
               std::to_string(numInputs) + " inputs, then results)";
      return false;
    };
    auto checkConstant = [&](int64_t index, int64_t count) {
      if (index >= 0 && index + count <= numConstants)
        return true;
      *error = where + " reads constant " + std::to_string(index) +
               (count > 1 ? " and the next" : "") + " of " +
               std::to_string(numConstants);
      return false;
    };
    auto checkUnused = [&](int64_t arg) {
      if (arg == -1)
        return true;
      *error = where + " takes one operand; its second arg must be -1, got " +
               std::to_string(arg);
      return false;
    };
    bool ok = false;
    switch (info->kind) {
    case OperandKind::Unary:
      ok = checkRef(ins.a) && checkUnused(ins.b);
      break;
    case OperandKind::Binary:
      ok = checkRef(ins.a) && checkRef(ins.b);
      break;
    case OperandKind::Param1:
      ok = checkRef(ins.a) && checkConstant(ins.b, 1);
      break;
    case OperandKind::Param2:
      ok = checkRef(ins.a) && checkConstant(ins.b, 2);
      break;
    case OperandKind::Const:
      ok = checkConstant(ins.a, 1) && checkUnused(ins.b);
      break;
    }
    if (!ok)
      return false;
    out->code.push_back(ins);
  }
  return true;
}

bool checkInputKinds(const Program &p, const std::vector<bool> &isI32,
                     std::string *error) {
  auto isIntInput = [&](int64_t r) {
    return r >= 0 && r < p.numInputs && size_t(r) < isI32.size() &&
           isI32[size_t(r)];
  };
  for (size_t i = 0; i < p.code.size(); ++i) {
    const Instruction &ins = p.code[i];
    const std::string where =
        "instruction " + std::to_string(i) + " (" + opcodeName(ins.op) + ")";
    if (ins.op == Opcode::FromI32) {
      if (!isIntInput(ins.a)) {
        *error = where + " must read an int32 input";
        return false;
      }
      continue;
    }
    const OperandKind kind = operandKind(ins.op);
    const bool readsA = kind != OperandKind::Const;
    const bool readsB = kind == OperandKind::Binary;
    if ((readsA && isIntInput(ins.a)) || (readsB && isIntInput(ins.b))) {
      *error = where + " reads an int32 input (only from_i32 may)";
      return false;
    }
  }
  return true;
}

} // namespace ingot::fused
