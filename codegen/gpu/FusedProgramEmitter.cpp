//===- FusedProgramEmitter.cpp - One element of a program as arith/math ---===//
//
// Each opcode computes what runtime/src/cpu/FusedOpcodes.cpp computes,
// NaN handling included: relu(NaN) = NaN, sign(NaN) = 0, max/min return a
// NaN operand, and std::min/std::max keep their argument order (the
// first argument when the comparison is false).
//
//===----------------------------------------------------------------------===//
#include "codegen/gpu/FusedProgramEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace ingot::codegen {
namespace {

using fused::Opcode;

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc) : b_(b), loc_(loc) {}

  Value constant(double v) {
    return arith::ConstantOp::create(b_, loc_, b_.getF32FloatAttr(float(v)));
  }
  /// x < y, ordered (false when either is NaN), as C++'s `<` on floats.
  Value less(Value x, Value y) {
    return arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLT, x, y);
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b_, loc_, c, t, f);
  }
  /// std::max(x, y) = x < y ? y : x; std::min(x, y) = y < x ? y : x.
  Value stdMax(Value x, Value y) { return select(less(x, y), y, x); }
  Value stdMin(Value x, Value y) { return select(less(y, x), y, x); }

  template <typename Op> Value un(Value x) { return Op::create(b_, loc_, x); }
  template <typename Op> Value bin(Value x, Value y) {
    return Op::create(b_, loc_, x, y);
  }

  /// log1p(exp(-|x|)) + max(x, 0), written per branch as the CPU does.
  Value softplus(Value x) {
    Value zero = constant(0.0);
    Value pos = bin<arith::AddFOp>(
        x, un<math::Log1pOp>(un<math::ExpOp>(un<arith::NegFOp>(x))));
    Value neg = un<math::Log1pOp>(un<math::ExpOp>(x));
    Value isPos =
        arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OGT, x, zero);
    return select(isPos, pos, neg);
  }

  Value binary(Opcode op, Value x, Value y);
  Value unary(Opcode op, Value x, const fused::Instruction &ins,
              const std::vector<float> &c);

private:
  OpBuilder &b_;
  Location loc_;
};

Value Emitter::binary(Opcode op, Value x, Value y) {
  switch (op) {
  case Opcode::Add:
    return bin<arith::AddFOp>(x, y);
  case Opcode::Sub:
    return bin<arith::SubFOp>(x, y);
  case Opcode::Mul:
    return bin<arith::MulFOp>(x, y);
  case Opcode::Div:
    return bin<arith::DivFOp>(x, y);
  case Opcode::Pow:
    return bin<math::PowFOp>(x, y);
  // IEEE maximum/minimum: a NaN operand gives NaN, as maxNan/minNan.
  case Opcode::Max:
    return bin<arith::MaximumFOp>(x, y);
  case Opcode::Min:
    return bin<arith::MinimumFOp>(x, y);
  default:
    return {};
  }
}

Value Emitter::unary(Opcode op, Value x, const fused::Instruction &ins,
                     const std::vector<float> &c) {
  auto zero = [&] { return constant(0.0); };
  auto one = [&] { return constant(1.0); };
  switch (op) {
  case Opcode::Neg:
    return un<arith::NegFOp>(x);
  case Opcode::Exp:
    return un<math::ExpOp>(x);
  case Opcode::Log:
    return un<math::LogOp>(x);
  case Opcode::Sqrt:
    return un<math::SqrtOp>(x);
  case Opcode::Tanh:
    return un<math::TanhOp>(x);
  case Opcode::Erf:
    return un<math::ErfOp>(x);
  case Opcode::Abs:
    return un<math::AbsFOp>(x);
  case Opcode::Sin:
    return un<math::SinOp>(x);
  case Opcode::Cos:
    return un<math::CosOp>(x);
  case Opcode::Floor:
    return un<math::FloorOp>(x);
  case Opcode::Ceil:
    return un<math::CeilOp>(x);
  case Opcode::Round:
    return un<math::RoundEvenOp>(x); // nearbyint
  case Opcode::Reciprocal:
    return bin<arith::DivFOp>(one(), x);
  case Opcode::Sigmoid:
    return bin<arith::DivFOp>(
        one(),
        bin<arith::AddFOp>(one(), un<math::ExpOp>(un<arith::NegFOp>(x))));
  case Opcode::Relu:
    return select(less(x, zero()), zero(), x);
  case Opcode::Softplus:
    return softplus(x);
  case Opcode::Mish:
    return bin<arith::MulFOp>(x, un<math::TanhOp>(softplus(x)));
  case Opcode::Sign: {
    Value pos = select(less(zero(), x), one(), zero());
    return select(less(x, zero()), constant(-1.0), pos);
  }
  case Opcode::LeakyRelu: {
    Value scaled = bin<arith::MulFOp>(constant(c[ins.b]), x);
    return select(less(x, zero()), scaled, x);
  }
  case Opcode::Elu: {
    Value scaled = bin<arith::MulFOp>(constant(c[ins.b]), un<math::ExpM1Op>(x));
    return select(less(x, zero()), scaled, x);
  }
  case Opcode::Gelu: // 0.5·x·(1 + erf(x/√2))
    return bin<arith::MulFOp>(
        bin<arith::MulFOp>(constant(0.5), x),
        bin<arith::AddFOp>(one(), un<math::ErfOp>(bin<arith::MulFOp>(
                                      x, constant(0.70710678118654752)))));
  case Opcode::GeluTanh: { // x·sigmoid(2u), u = √(2/π)(x + 0.044715x³)
    Value t = bin<arith::MulFOp>(
        x, bin<arith::AddFOp>(constant(1.5957691216057308),
                              bin<arith::MulFOp>(constant(0.0713548162726),
                                                 bin<arith::MulFOp>(x, x))));
    Value sig = bin<arith::DivFOp>(
        one(),
        bin<arith::AddFOp>(one(), un<math::ExpOp>(un<arith::NegFOp>(t))));
    return bin<arith::MulFOp>(x, sig);
  }
  case Opcode::HardSigmoid: {
    Value lin = bin<arith::AddFOp>(bin<arith::MulFOp>(constant(c[ins.b]), x),
                                   constant(c[ins.b + 1]));
    return stdMax(zero(), stdMin(one(), lin));
  }
  default:
    return {};
  }
}

} // namespace

Value emitProgram(OpBuilder &b, Location loc, const fused::Program &program,
                  ArrayRef<Value> inputs) {
  Emitter e(b, loc);
  std::vector<Value> values(inputs.begin(), inputs.end());
  auto ref = [&](int64_t r) { return values[static_cast<size_t>(r)]; };
  for (const fused::Instruction &ins : program.code) {
    Value result;
    switch (fused::operandKind(ins.op)) {
    case fused::OperandKind::Const:
      result = e.constant(program.constants[static_cast<size_t>(ins.a)]);
      break;
    case fused::OperandKind::Binary:
      result = e.binary(ins.op, ref(ins.a), ref(ins.b));
      break;
    default:
      result = e.unary(ins.op, ref(ins.a), ins, program.constants);
      break;
    }
    values.push_back(result);
  }
  return values.back();
}

} // namespace ingot::codegen
