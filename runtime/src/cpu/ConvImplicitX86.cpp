//===- ConvImplicitX86.cpp - AVX2 and AVX-512 implicit-conv tiles ---------===//
//
// The tiles of ConvImplicitTile.inc compiled twice: AVX-512 with 12 x 32
// tiles (24 zmm accumulators) and AVX2 with 6 x 16 (12 ymm). Called only
// after CPUID reported the features (bestGemmIsa).
//
//===----------------------------------------------------------------------===//

#include "cpu/ConvImplicit.h"

#include <immintrin.h>

namespace ingot::cpu {

#if defined(__clang__) // clang ignores GCC's target pragma
#pragma clang attribute push(__attribute__((target("avx2,fma"))),              \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2implicit {
namespace {
struct Vec {
  using F = __m256;
  static constexpr int L = 8, kRows = 6;
  static F zero() { return _mm256_setzero_ps(); }
  static F loadu(const float *p) { return _mm256_loadu_ps(p); }
  static void storeu(float *p, F v) { _mm256_storeu_ps(p, v); }
  static F bcast(const float *p) { return _mm256_broadcast_ss(p); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
};
#include "cpu/ConvImplicitTile.inc"
} // namespace
ImplicitKernels kernels() { return {kMr, kNr, block}; }
} // namespace avx2implicit
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))),               \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
namespace avx512implicit {
namespace {
struct Vec {
  using F = __m512;
  static constexpr int L = 16, kRows = 12;
  static F zero() { return _mm512_setzero_ps(); }
  static F loadu(const float *p) { return _mm512_loadu_ps(p); }
  static void storeu(float *p, F v) { _mm512_storeu_ps(p, v); }
  static F bcast(const float *p) { return _mm512_set1_ps(*p); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
};
#include "cpu/ConvImplicitTile.inc"
} // namespace
ImplicitKernels kernels() { return {kMr, kNr, block}; }
} // namespace avx512implicit
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

ImplicitKernels implicitKernels(GemmIsa isa) {
  switch (isa) {
  case GemmIsa::Avx512:
    return avx512implicit::kernels();
  case GemmIsa::Avx2:
    return avx2implicit::kernels();
  default:
    return {};
  }
}

} // namespace ingot::cpu
