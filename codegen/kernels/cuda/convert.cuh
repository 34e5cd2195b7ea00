//===- convert.cuh - cast of 16-bit floats to f32 ---------------*- C++ -*-===//
//
// The runtime's cast (runtime/src/cpu/Conversion.cpp) from f16 or bf16 to
// f32, which is exact: what follows a 16-bit model's embedding gather.
//
// Launch: one thread per element, grid.x = ceil(n / blockDim.x), block 256.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "prelude.cuh"

namespace ingot_k {

/// y[i] = f32(x[i]); W is Bf16 or F16 (or float: a copy).
template <typename W>
INGOT_DEVICE void castToF32(const W *x, float *y, i64 n) {
  const i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = widen(x[i]);
}

} // namespace ingot_k
