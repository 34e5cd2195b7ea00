//===- ReduceMinMax.h - Max or min of a whole f32 tensor --------*- C++ -*-===//
#pragma once

#include "cpu/KernelRegistry.h"

#include <cstdint>

namespace ingot::cpu {

/// Max (or min) of in[0..n), NaN if any element is NaN; n > 0.
float minMaxAllF32(KernelContext &ctx, const float *in, int64_t n, bool isMax);

} // namespace ingot::cpu
