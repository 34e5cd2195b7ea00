//===- prelude.cuh - What every CUDA kernel template includes ---*- C++ -*-===//
//
// The kernel templates of codegen/kernels/cuda/ are compiled three ways:
// by NVRTC inside the compiler (one instance per plan step and target), and
// as host C++ by the kernel tests, under test/unit/cuda_emu/CudaEmulation.h,
// which runs each thread of a block as a host thread. This header is the
// only place that differs between the two: qualifiers, the integer types,
// warp shuffles and 16-bit float conversions (bit operations, so NVRTC
// needs no toolkit headers).
//
//===----------------------------------------------------------------------===//
#pragma once

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define INGOT_DEVICE __device__ __forceinline__
#define INGOT_SHARED __shared__
namespace ingot_k {
typedef long long i64;
typedef int i32;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;
INGOT_DEVICE float shflXor(float v, int lane) {
  return __shfl_xor_sync(0xffffffffu, v, lane);
}
INGOT_DEVICE void syncBlock() { __syncthreads(); }
INGOT_DEVICE float expFast(float x) { return __expf(x); }
INGOT_DEVICE float rsqrtF(float x) { return rsqrtf(x); }
} // namespace ingot_k
#else
#include "CudaEmulation.h"
#endif

namespace ingot_k {

constexpr int kWarp = 32;

INGOT_DEVICE float bf16ToF32(u16 h) {
  return __uint_as_float(static_cast<u32>(h) << 16);
}

/// IEEE binary16 to f32, subnormals, infinities and NaN included.
INGOT_DEVICE float f16ToF32(u16 h) {
  const u32 sign = static_cast<u32>(h & 0x8000u) << 16;
  const u32 exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1fu)
    return __uint_as_float(sign | 0x7f800000u | (man << 13));
  if (exp != 0)
    return __uint_as_float(sign | ((exp + 112u) << 23) | (man << 13));
  // Subnormal: man * 2^-24, exact in f32.
  const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

/// Weight element widened to f32; W is float, or a tag for 16-bit storage.
struct Bf16 { u16 bits; };
struct F16 { u16 bits; };
INGOT_DEVICE float widen(float v) { return v; }
INGOT_DEVICE float widen(Bf16 v) { return bf16ToF32(v.bits); }
INGOT_DEVICE float widen(F16 v) { return f16ToF32(v.bits); }

/// Sum over the 32 lanes of a warp; every lane gets the total, and the
/// order of additions is fixed (a butterfly), so results do not depend on
/// which other work runs.
INGOT_DEVICE float warpSum(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2)
    v += shflXor(v, o);
  return v;
}
INGOT_DEVICE float warpMax(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2)
    v = fmaxf(v, shflXor(v, o));
  return v;
}

/// Sum over a block of BLOCK threads (a multiple of 32, at most 1024);
/// every thread gets the total. `scratch` holds BLOCK / 32 floats of
/// shared memory; the call synchronises the block twice.
template <int BLOCK> INGOT_DEVICE float blockSum(float v, float *scratch) {
  static_assert(BLOCK % kWarp == 0 && BLOCK <= 1024, "block size");
  v = warpSum(v);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0)
    scratch[warp] = v;
  syncBlock();
  float total = 0.f;
  for (int w = 0; w < BLOCK / kWarp; ++w)
    total += scratch[w];
  syncBlock();
  return total;
}

} // namespace ingot_k
