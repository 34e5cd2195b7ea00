//===- MathF32Vec.h - exp, sigmoid, tanh, GELU on a vector ------*- C++ -*-===//
//
// Private to MathF32.cpp: the per-vector functions behind its array loops,
// written once with GCC vector extensions and inlined into its AVX2,
// AVX-512 and baseline entry points (the method is in MathF32.cpp's
// header). Include it after `#pragma GCC diagnostic ignored "-Wpsabi"`:
// wide vectors only ever live inside always-inline helpers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstring>

#include <immintrin.h>

#define INGOT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace ingot::cpu::vecmath {

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

/// 1 / d for normal d (or NaN); callers keep d within [1, 2^126].
template <typename VF> INGOT_ALWAYS_INLINE VF reciprocalOfNormal(const VF &d) {
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
inline F16 reciprocalOfNormal(const F16 &d) {
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
  const VF s = reciprocalOfNormal(1.0f + e);
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

/// GELU's exact form x·Φ(x) with Φ(x) = erfc(−x/√2) / 2. erfc is only
/// taken of z = |x|/√2 >= 0, by Numerical Recipes' Chebyshev fit
/// erfc(z) = u·exp(−z² − 1.26551223 + u·P(u)), u = 1/(1 + z/2) (relative
/// error 1.2e-7 over all z >= 0); then Φ = c/2 below 0, which keeps the
/// negative tail's relative precision, and 1 − c/2 above, which cannot
/// cancel (c/2 <= 1/2). One pass of about 35 vector ops: the erf/erfc pair
/// it replaced evaluated a series and the fit for every value and made
/// three passes over memory. z is capped at 16, where exp has underflowed
/// to 0 and u stays a normal reciprocal (a NaN x stays NaN through x·Φ).
template <typename VF, typename VI>
INGOT_ALWAYS_INLINE VF geluErfVec(const VF &x) {
  VF z = (VF)((VI)x & 0x7fffffff) * 0.70710678118654752f;
  z = z < 16.0f ? z : VF{} + 16.0f;
  const VF u = reciprocalOfNormal(1.0f + 0.5f * z);
  VF p = VF{} + 0.17087277f;
  p = p * u + -0.82215223f;
  p = p * u + 1.48851587f;
  p = p * u + -1.13520398f;
  p = p * u + 0.27886807f;
  p = p * u + -0.18628806f;
  p = p * u + 0.09678418f;
  p = p * u + 0.37409196f;
  p = p * u + 1.00002368f;
  // The exponent is at most 3e-8 (at z = 0), far below exp's overflow.
  const VF e = expVec<VF, VI, true>(u * p + -1.26551223f - z * z);
  const VF half = 0.5f * (u * e);
  return x * (x > 0 ? 1.0f - half : half);
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

} // namespace ingot::cpu::vecmath
