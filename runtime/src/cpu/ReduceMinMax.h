//===- ReduceMinMax.h - Max or min of f32 tensors and rows ------*- C++ -*-===//
#pragma once

#include "cpu/KernelRegistry.h"

#include <cstdint>

namespace ingot::cpu {

/// Max (or min) of in[0..n), NaN if any element is NaN; n > 0.
float minMaxAllF32(KernelContext &ctx, const float *in, int64_t n, bool isMax);

/// Both, as minMaxAllF32 gives each, in one parallel pass over the chunks.
void minAndMaxAllF32(KernelContext &ctx, const float *in, int64_t n, float *lo,
                     float *hi);

/// Max (or min) of one row as the reduce kernel's serial loop gives it:
/// the first of equal extremes (so -0 or +0, whichever comes first), or
/// the row's last NaN if it has one; -inf (+inf) for n == 0. Vectorised,
/// with the serial loop redone only for a row whose extreme is 0 or NaN.
float rowMinMaxF32(const float *row, int64_t n, bool isMax);

/// reduce's max (min) of f32 input 0 into output 0 when the reduced axes
/// are trailing (`kept`: the input's shape with them 1): each output is a
/// contiguous row, taken by rowMinMaxF32 in parallel. False, writing
/// nothing, when they are not.
bool minMaxTrailingRowsF32(KernelContext &ctx, const shape::Shape &kept,
                           bool isMax);

} // namespace ingot::cpu
