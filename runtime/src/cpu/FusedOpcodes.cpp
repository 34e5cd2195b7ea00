//===- FusedOpcodes.cpp - Opcodes of fused_elementwise over tiles ---------===//
#include "cpu/FusedOpcodes.h"
#include "cpu/MathF32.h"

#include <algorithm>
#include <cmath>

namespace ingot::cpu {
namespace {

using fused::Opcode;

// The per-element functions, as the unfused kernels compute them.
float softplus(float x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
float maxNan(float x, float y) {
  return x != x ? x : y != y ? y : (x < y ? y : x);
}
float minNan(float x, float y) {
  return x != x ? x : y != y ? y : (y < x ? y : x);
}

/// out[i] = f(a[i], b[i]) over a tile, with either side possibly scalar.
template <typename F>
void binaryLoop(Val a, Val b, float *out, int64_t n, F f) {
  if (!a.scalar && !b.scalar) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a.p[i], b.p[i]);
  } else if (!a.scalar) {
    const float bv = b.s;
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a.p[i], bv);
  } else {
    const float av = a.s;
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(av, b.p[i]);
  }
}

template <typename F>
void unaryLoop(const float *x, float *out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = f(x[i]);
}

} // namespace

void applyOpcode(const fused::Instruction &ins, Val a, Val b,
                 const std::vector<float> &c, float *out, int64_t n) {
  switch (ins.op) {
  case Opcode::Add:
    return binaryLoop(a, b, out, n, [](float x, float y) { return x + y; });
  case Opcode::Sub:
    return binaryLoop(a, b, out, n, [](float x, float y) { return x - y; });
  case Opcode::Mul:
    return binaryLoop(a, b, out, n, [](float x, float y) { return x * y; });
  case Opcode::Div:
    return binaryLoop(a, b, out, n, [](float x, float y) { return x / y; });
  case Opcode::Max:
    return binaryLoop(a, b, out, n, maxNan);
  case Opcode::Min:
    return binaryLoop(a, b, out, n, minNan);
  case Opcode::Pow:
    // As the pow kernel: a one-element exponent of 2, 3 or 0.5 skips pow.
    if (b.scalar && b.s == 2.0f)
      return binaryLoop(a, b, out, n, [](float x, float) { return x * x; });
    if (b.scalar && b.s == 3.0f)
      return binaryLoop(a, b, out, n, [](float x, float) { return x * x * x; });
    if (b.scalar && b.s == 0.5f)
      return binaryLoop(a, b, out, n,
                        [](float x, float) { return std::sqrt(x); });
    return binaryLoop(a, b, out, n,
                      [](float x, float y) { return std::pow(x, y); });
  default:
    break;
  }
  const float *x = a.p;
  switch (ins.op) {
  case Opcode::Neg:
    return unaryLoop(x, out, n, [](float v) { return -v; });
  case Opcode::Exp:
    return expF32(x, 0.0f, out, n);
  case Opcode::Sigmoid:
    return sigmoidF32(x, out, n);
  case Opcode::Log:
    return unaryLoop(x, out, n, [](float v) { return std::log(v); });
  case Opcode::Sqrt:
    return unaryLoop(x, out, n, [](float v) { return std::sqrt(v); });
  case Opcode::Tanh:
    return tanhF32(x, out, n);
  case Opcode::Erf:
    return erfF32(x, out, n);
  case Opcode::Relu:
    return unaryLoop(x, out, n, [](float v) { return v < 0.0f ? 0.0f : v; });
  case Opcode::Abs:
    return unaryLoop(x, out, n, [](float v) { return std::fabs(v); });
  case Opcode::Reciprocal:
    return unaryLoop(x, out, n, [](float v) { return 1.0f / v; });
  case Opcode::Softplus:
    return unaryLoop(x, out, n, softplus);
  case Opcode::Mish:
    return unaryLoop(x, out, n,
                     [](float v) { return v * std::tanh(softplus(v)); });
  case Opcode::Sin:
    return unaryLoop(x, out, n, [](float v) { return std::sin(v); });
  case Opcode::Cos:
    return unaryLoop(x, out, n, [](float v) { return std::cos(v); });
  case Opcode::Floor:
    return unaryLoop(x, out, n, [](float v) { return std::floor(v); });
  case Opcode::Ceil:
    return unaryLoop(x, out, n, [](float v) { return std::ceil(v); });
  case Opcode::Round:
    return unaryLoop(x, out, n, roundHalfEven);
  case Opcode::Sign:
    return unaryLoop(x, out, n,
                     [](float v) { return float((v > 0) - (v < 0)); });
  case Opcode::LeakyRelu: {
    const float al = c[ins.b];
    return unaryLoop(x, out, n, [al](float v) { return v < 0 ? al * v : v; });
  }
  case Opcode::Elu: {
    const float al = c[ins.b];
    return unaryLoop(x, out, n,
                     [al](float v) { return v < 0 ? al * std::expm1(v) : v; });
  }
  case Opcode::HardSigmoid: {
    const float al = c[ins.b], be = c[ins.b + 1];
    return unaryLoop(x, out, n, [al, be](float v) {
      return std::max(0.0f, std::min(1.0f, al * v + be));
    });
  }
  default:
    return;
  }
}

} // namespace ingot::cpu
