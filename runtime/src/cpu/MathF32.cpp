//===- MathF32.cpp - Vectorised exp and sigmoid over f32 arrays -----------===//
//
// exp is the hot transcendental of softmax and sigmoid/SiLU. libm's expf is
// scalar; this one is written once with GCC vector extensions and compiled
// three times (baseline SSE4.2, AVX2, AVX-512), picked once from CPUID.
//
// Method: exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 in
// [-ln2/2, ln2/2] (ln 2 split in two so n ln 2 is exact), exp(r) by a
// degree-7 minimax-style polynomial (Cephes' coefficients), max error about
// 1.4 ulp over the normal range. 2^n is built from exponent bits in two
// halves so results down to the subnormal range stay right (AVX-512 scales
// by 2^n in one instruction, with the same bits). The AVX builds
// contract multiply-adds into FMAs, so ISAs may differ in the last bit.
//
//===----------------------------------------------------------------------===//

#include "cpu/MathF32.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

// Vectors wider than the baseline ISA live only inside always-inline helpers
// of functions compiled for AVX2 / AVX-512, so no ABI is ever involved.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "cpu/MathF32Vec.h"

namespace ingot::cpu {
namespace {

using namespace vecmath;

// Functors rather than lambdas: a lambda is a separate function compiled
// for the baseline ISA, and would not be inlined into the AVX clones.
template <typename VF, typename VI> struct ExpOp {
  float shift;
  INGOT_ALWAYS_INLINE VF operator()(const VF &v) const {
    return expVec<VF, VI>(v - shift);
  }
};
template <typename VF, typename VI> struct SigmoidOp {
  INGOT_ALWAYS_INLINE VF operator()(const VF &v) const {
    return sigmoidVec<VF, VI>(v);
  }
};

/// x · sigmoid(x) in one pass: the product of the same two floats the
/// separate sigmoid and multiply give.
template <typename VF, typename VI> struct SiluOp {
  INGOT_ALWAYS_INLINE VF operator()(const VF &v) const {
    return v * sigmoidVec<VF, VI>(v);
  }
};

template <typename VF, typename VI> struct GeluErfOp {
  INGOT_ALWAYS_INLINE VF operator()(const VF &v) const {
    return geluErfVec<VF, VI>(v);
  }
};

template <typename VF, typename VI> struct TanhOp {
  INGOT_ALWAYS_INLINE VF operator()(const VF &v) const {
    return tanhVec<VF, VI>(v);
  }
};

template <typename VF, typename VI>
INGOT_ALWAYS_INLINE void expLoop(const float *x, float shift, float *y,
                                 int64_t n) {
  mapVec<VF>(x, y, n, ExpOp<VF, VI>{shift});
}

template <typename VF, typename VI>
INGOT_ALWAYS_INLINE void sigmoidLoop(const float *x, float *y, int64_t n) {
  mapVec<VF>(x, y, n, SigmoidOp<VF, VI>{});
}

__attribute__((target("avx512f"), flatten)) void
expAvx512(const float *x, float shift, float *y, int64_t n) {
  expLoop<F16, I16>(x, shift, y, n);
}
__attribute__((target("avx2,fma"))) void expAvx2(const float *x, float shift,
                                                 float *y, int64_t n) {
  expLoop<F8, I8>(x, shift, y, n);
}
void expBaseline(const float *x, float shift, float *y, int64_t n) {
  expLoop<F4, I4>(x, shift, y, n);
}

__attribute__((target("avx512f"), flatten)) void
sigmoidAvx512(const float *x, float *y, int64_t n) {
  sigmoidLoop<F16, I16>(x, y, n);
}
__attribute__((target("avx2,fma"))) void sigmoidAvx2(const float *x, float *y,
                                                     int64_t n) {
  sigmoidLoop<F8, I8>(x, y, n);
}
void sigmoidBaseline(const float *x, float *y, int64_t n) {
  sigmoidLoop<F4, I4>(x, y, n);
}

__attribute__((target("avx512f"), flatten)) void
siluAvx512(const float *x, float *y, int64_t n) {
  mapVec<F16>(x, y, n, SiluOp<F16, I16>{});
}
__attribute__((target("avx2,fma"))) void siluAvx2(const float *x, float *y,
                                                  int64_t n) {
  mapVec<F8>(x, y, n, SiluOp<F8, I8>{});
}
void siluBaseline(const float *x, float *y, int64_t n) {
  mapVec<F4>(x, y, n, SiluOp<F4, I4>{});
}

__attribute__((target("avx512f"), flatten)) void
geluErfAvx512(const float *x, float *y, int64_t n) {
  mapVec<F16>(x, y, n, GeluErfOp<F16, I16>{});
}
__attribute__((target("avx2,fma"))) void geluErfAvx2(const float *x, float *y,
                                                     int64_t n) {
  mapVec<F8>(x, y, n, GeluErfOp<F8, I8>{});
}
void geluErfBaseline(const float *x, float *y, int64_t n) {
  mapVec<F4>(x, y, n, GeluErfOp<F4, I4>{});
}

__attribute__((target("avx512f"), flatten)) void
tanhAvx512(const float *x, float *y, int64_t n) {
  mapVec<F16>(x, y, n, TanhOp<F16, I16>{});
}
__attribute__((target("avx2,fma"))) void tanhAvx2(const float *x, float *y,
                                                  int64_t n) {
  mapVec<F8>(x, y, n, TanhOp<F8, I8>{});
}
void tanhBaseline(const float *x, float *y, int64_t n) {
  mapVec<F4>(x, y, n, TanhOp<F4, I4>{});
}

GemmIsa cpuLevel() {
  static const GemmIsa level =
      gemmIsaSupported(GemmIsa::Avx512) ? GemmIsa::Avx512
      : gemmIsaSupported(GemmIsa::Avx2) ? GemmIsa::Avx2
                                        : GemmIsa::Generic;
  return level;
}

} // namespace

void expF32(GemmIsa isa, const float *x, float shift, float *y, int64_t n) {
  switch (isa) {
  case GemmIsa::Avx512:
    return expAvx512(x, shift, y, n);
  case GemmIsa::Avx2:
    return expAvx2(x, shift, y, n);
  default:
    return expBaseline(x, shift, y, n);
  }
}

void sigmoidF32(GemmIsa isa, const float *x, float *y, int64_t n) {
  switch (isa) {
  case GemmIsa::Avx512:
    return sigmoidAvx512(x, y, n);
  case GemmIsa::Avx2:
    return sigmoidAvx2(x, y, n);
  default:
    return sigmoidBaseline(x, y, n);
  }
}

void tanhF32(GemmIsa isa, const float *x, float *y, int64_t n) {
  switch (isa) {
  case GemmIsa::Avx512:
    return tanhAvx512(x, y, n);
  case GemmIsa::Avx2:
    return tanhAvx2(x, y, n);
  default:
    return tanhBaseline(x, y, n);
  }
}

void tanhF32(const float *x, float *y, int64_t n) {
  tanhF32(cpuLevel(), x, y, n);
}

void siluF32(const float *x, float *y, int64_t n) {
  switch (cpuLevel()) {
  case GemmIsa::Avx512:
    return siluAvx512(x, y, n);
  case GemmIsa::Avx2:
    return siluAvx2(x, y, n);
  default:
    return siluBaseline(x, y, n);
  }
}

void geluErfF32(const float *x, float *y, int64_t n) {
  geluErfF32(cpuLevel(), x, y, n);
}

void geluErfF32(GemmIsa isa, const float *x, float *y, int64_t n) {
  switch (isa) {
  case GemmIsa::Avx512:
    return geluErfAvx512(x, y, n);
  case GemmIsa::Avx2:
    return geluErfAvx2(x, y, n);
  default:
    return geluErfBaseline(x, y, n);
  }
}

void expF32(const float *x, float shift, float *y, int64_t n) {
  expF32(cpuLevel(), x, shift, y, n);
}

constexpr int64_t kErfChunk = 256;

/// erf (kComplement false) or erfc of the kErfChunk values of xs into out.
template <bool kComplement>
__attribute__((always_inline, optimize("no-trapping-math"))) inline void
erfChunk(const float *xs, float *out) {
  // |x| < 0.5: the Taylor series of erf to x^13 (relative error < 3e-8).
  // Above: Numerical Recipes' Chebyshev fit of erfc (relative error
  // 1.2e-7) and erf = 1 - erfc; the fit's exponent goes through the vectorised
  // expF32 a chunk at a time. The loops are branch-free f32 over local arrays
  // (out may be xs); without trapping-math (results are the same, only FP
  // exception flags may differ) GCC turns the select into a blend and
  // vectorises them, in one clone per ISA (its bits may differ by ISA, as
  // expF32's do; the fused and unfused kernels call the same clone).
  alignas(64) float t[kErfChunk], e[kErfChunk];
  for (int64_t i = 0; i < kErfChunk; ++i) {
    const float z = __builtin_fabsf(xs[i]);
    const float u = 1.0f / (1.0f + 0.5f * z);
    float p = -0.82215223f + u * 0.17087277f;
    p = 1.48851587f + u * p;
    p = -1.13520398f + u * p;
    p = 0.27886807f + u * p;
    p = -0.18628806f + u * p;
    p = 0.09678418f + u * p;
    p = 0.37409196f + u * p;
    p = 1.00002368f + u * p;
    t[i] = u;
    e[i] = -z * z - 1.26551223f + u * p;
  }
  expF32(e, 0.0f, e, kErfChunk);
  for (int64_t i = 0; i < kErfChunk; ++i) {
    const float v = xs[i], z2 = v * v;
    float s = 1.0f / 1320 - z2 * (1.0f / 9360);
    s = 1.0f / 216 - z2 * s;
    s = 1.0f / 42 - z2 * s;
    s = 1.0f / 10 - z2 * s;
    s = 1.0f / 3 - z2 * s;
    const float series = 1.12837917f * v * (1.0f - z2 * s);
    // t·e is erfc(|v|): erfc(v) for v >= 0.5 keeps its relative
    // precision where erf(v) is near 1 (GELU's negative tail).
    const float c = t[i] * e[i];
    if constexpr (kComplement)
      out[i] =
          __builtin_fabsf(v) < 0.5f ? 1.0f - series : (v > 0 ? c : 2.0f - c);
    else
      out[i] =
          __builtin_fabsf(v) < 0.5f ? series : __builtin_copysignf(1.0f - c, v);
  }
}

/// erf (kComplement false) or erfc of x[0..n).
template <bool kComplement>
__attribute__((always_inline, optimize("no-trapping-math"))) inline void
erfOrErfc(const float *x, float *y, int64_t n) {
  alignas(64) float xs[kErfChunk];
  for (int64_t at = 0; at < n; at += kErfChunk) {
    // Whole chunks only (a short last one padded with zeros): every value
    // then takes the same vector code, wherever it lies in x, which keeps
    // gelu batch invariant (a scalar loop tail contracts differently).
    const int64_t m = std::min(kErfChunk, n - at);
    std::memcpy(xs, x + at, size_t(m) * sizeof(float));
    std::fill(xs + m, xs + kErfChunk, 0.0f);
    erfChunk<kComplement>(xs, xs);
    std::memcpy(y + at, xs, size_t(m) * sizeof(float));
  }
}

__attribute__((optimize("no-trapping-math"),
               target_clones("avx512f", "avx2", "default"))) void
erfF32(const float *x, float *y, int64_t n) {
  erfOrErfc<false>(x, y, n);
}

__attribute__((optimize("no-trapping-math"),
               target_clones("avx512f", "avx2", "default"))) void
erfcF32(const float *x, float *y, int64_t n) {
  erfOrErfc<true>(x, y, n);
}

void sigmoidF32(const float *x, float *y, int64_t n) {
  sigmoidF32(cpuLevel(), x, y, n);
}

} // namespace ingot::cpu
