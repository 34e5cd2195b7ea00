//===- FusedOpcodes.cpp - Opcodes of fused_elementwise over tiles ---------===//
//
// The opcode loops (FusedOpcodes.inc) compiled for the baseline ISA, AVX2
// and AVX-512F; applyOpcode runs the widest this CPU has (INGOT_GEMM_ISA
// caps it, as for the GEMM).
//
//===----------------------------------------------------------------------===//
#include "cpu/FusedOpcodes.h"
#include "cpu/Activation.h"
#include "cpu/Gemm.h"
#include "cpu/MathF32.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#define INGOT_FUSED_INLINE inline __attribute__((always_inline))

namespace ingot::cpu {
namespace {
using fused::Opcode;

namespace baseline {
#define INGOT_FUSED_TARGET
#include "cpu/FusedOpcodes.inc"
#undef INGOT_FUSED_TARGET
} // namespace baseline

#if defined(__x86_64__)
namespace avx2 {
#define INGOT_FUSED_TARGET __attribute__((target("avx2")))
#include "cpu/FusedOpcodes.inc"
#undef INGOT_FUSED_TARGET
} // namespace avx2

namespace avx512 {
#define INGOT_FUSED_TARGET __attribute__((target("avx512f")))
#include "cpu/FusedOpcodes.inc"
#undef INGOT_FUSED_TARGET
} // namespace avx512
#endif

} // namespace

void applyOpcode(const fused::Instruction &ins, Val a, Val b,
                 const std::vector<float> &constants, float *out, int64_t n) {
#if defined(__x86_64__)
  static const GemmIsa isa = bestGemmIsa();
  if (isa == GemmIsa::Avx512)
    return avx512::applyOpcode(ins, a, b, constants, out, n);
  if (isa == GemmIsa::Avx2)
    return avx2::applyOpcode(ins, a, b, constants, out, n);
#endif
  baseline::applyOpcode(ins, a, b, constants, out, n);
}

} // namespace ingot::cpu
