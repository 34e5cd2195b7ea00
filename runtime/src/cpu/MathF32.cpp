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

#include <immintrin.h>

// Vectors wider than the baseline ISA live only inside always-inline helpers
// of functions compiled for AVX2 / AVX-512, so no ABI is ever involved.
#pragma GCC diagnostic ignored "-Wpsabi"

#define INGOT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace ingot::cpu {
namespace {

// GCC vector extensions: one source, lowered to SSE, AVX2 or AVX-512 by the
// target of the function it is inlined into.
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));
typedef float F8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef float F16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));

constexpr float kExpHi = 88.7228394f;      // ln(FLT_MAX): above is +inf
constexpr float kExpLo = -103.972084f;     // below, exp rounds to 0
constexpr float kRoundMagic = 12582912.0f; // 1.5 * 2^23: t + magic rounds t

/// p·2^n for integral n in [-150, 128] (t - kRoundMagic): two products,
/// the first exact, so results down to the subnormal range round once.
template <typename VF, typename VI>
INGOT_ALWAYS_INLINE VF scaleByPow2(const VF &p, const VF &, const VF &t, VI) {
  const VI ni = (VI)t - 0x4B400000;
  const VI n1 = ni >> 1, n2 = ni - n1; // each within [-75, 64]
  return p * (VF)((n1 + 127) << 23) * (VF)((n2 + 127) << 23);
}

/// 1 / d for d in [1, 2] (or NaN).
template <typename VF>
INGOT_ALWAYS_INLINE VF reciprocalOfOneToTwo(const VF &d) {
  return 1.0f / d;
}

// The AVX-512 overloads, compiled for AVX-512 (so the intrinsics are
// declared and their operands fit) and inlined by the entry points'
// `flatten`: a target function cannot be always_inline into the generic
// templates that call it.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))),               \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
/// p·2^n in one vscalefps, rounded once as the two products are (the
/// same bits), for a fifth of exp's uops. The zero-masked forms: GCC 12's
/// unmasked ones pass an undefined vector, which -Wmaybe-uninitialized
/// reports.
inline F16 scaleByPow2(const F16 &p, const F16 &n, const F16 &, I16) {
  return (F16)_mm512_maskz_scalef_ps(0xffff, (__m512)p, (__m512)n);
}
/// vrcp14ps and one Newton step: about 2^-28 relative error before
/// rounding (so within an ulp of the division) in four uops, where vdivps
/// on a zmm holds its port for about ten cycles: the division was a third
/// of SiLU's time, and SiLU 8% of YOLOv8n's run.
inline F16 reciprocalOfOneToTwo(const F16 &d) {
  const F16 r = (F16)_mm512_maskz_rcp14_ps(0xffff, (__m512)d);
  return r * (2.0f - d * r);
}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

/// exp(x); `kNonPositive` when every x <= 0 (or NaN), which skips the
/// overflow clamps.
template <typename VF, typename VI, bool kNonPositive = false>
INGOT_ALWAYS_INLINE VF expVec(const VF &x) {
  VF xc = x < kExpLo ? VF{} + kExpLo : x;
  if (!kNonPositive)
    xc = xc > kExpHi ? VF{} + kExpHi : xc;
  // n = round(x / ln2), read back both as a float and from the low bits.
  const VF t = xc * 1.44269504088896341f + kRoundMagic;
  const VF n = t - kRoundMagic;
  VF r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  VF p = VF{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  VF y = scaleByPow2(p, n, t, VI{});
  if (!kNonPositive)
    y = x > kExpHi ? VF{} + __builtin_inff() : y;
  y = x < kExpLo ? VF{} : y;
  return x != x ? x : y; // NaN in, NaN out
}

template <typename VF, typename VI>
INGOT_ALWAYS_INLINE VF sigmoidVec(const VF &x) {
  // 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, with e = e^-|x|
  // never overflowing.
  // -|x| by setting the sign bit: one op where a compare and a select
  // took three (the same value, -0 for ±0, whose exp is 1 either way).
  const VF e = expVec<VF, VI, true>((VF)((VI)x | (int32_t)0x80000000));
  const VF s = reciprocalOfOneToTwo(1.0f + e);
  return x < 0 ? e * s : s;
}

template <typename VF, typename VI>
INGOT_ALWAYS_INLINE VF tanhVec(const VF &x) {
  // tanh is odd: computed on |x|, then x's sign bit is put back (so -0
  // stays -0). |x| < 0.625: |x| + |x|^3 P(x^2), the minimax polynomial
  // Cephes' tanhf uses (no cancellation near 0). Above: (1 - e) / (1 + e)
  // with e = e^(-2|x|) in (0, 0.29], so neither term cancels.
  const VI signBit = (VI)x & (int32_t)0x80000000;
  const VF ax = (VF)((VI)x & 0x7fffffff);
  const VF z = ax * ax;
  VF p = VF{} + -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z + -5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z + -3.33332819422e-1f;
  const VF small = p * z * ax + ax;
  const VF e = expVec<VF, VI>(-2.0f * ax);
  const VF large = (1.0f - e) / (1.0f + e);
  const VF y = (VF)((VI)(ax < 0.625f ? small : large) | signBit);
  return x != x ? x : y; // NaN in, NaN out
}

/// Applies `op` to [0, n) a vector at a time; the tail goes through a
/// zero-padded vector so every element takes the same path.
template <typename VF, typename Op>
INGOT_ALWAYS_INLINE void mapVec(const float *x, float *y, int64_t n, Op op) {
  constexpr int64_t w = sizeof(VF) / sizeof(float);
  int64_t i = 0;
  for (; i + w <= n; i += w) {
    VF v;
    std::memcpy(&v, x + i, sizeof v);
    v = op(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    float buf[w] = {};
    std::memcpy(buf, x + i, (n - i) * sizeof(float));
    VF v;
    std::memcpy(&v, buf, sizeof v);
    v = op(v);
    std::memcpy(buf, &v, sizeof v);
    std::memcpy(y + i, buf, (n - i) * sizeof(float));
  }
}

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

/// 0.5x·erfc(−x/√2) with the same operations as erfcF32 and a multiply
/// before and after, in one clone per ISA: the passes around erfcF32 ran
/// on the baseline ISA and took a third of BERT's GELU (5.4 cycles an
/// element against erfcF32's 3.6).
__attribute__((optimize("no-trapping-math"),
               target_clones("avx512f", "avx2", "default"))) void
geluErfF32(const float *x, float *y, int64_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  alignas(64) float w[kErfChunk];
  for (int64_t at = 0; at < n; at += kErfChunk) {
    const int64_t m = std::min(kErfChunk, n - at);
    for (int64_t i = 0; i < m; ++i)
      w[i] = -x[at + i] * kInvSqrt2;
    std::fill(w + m, w + kErfChunk, 0.0f);
    erfChunk<true>(w, w);
    for (int64_t i = 0; i < m; ++i)
      y[at + i] = 0.5f * x[at + i] * w[i];
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
