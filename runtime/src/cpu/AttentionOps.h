//===- AttentionOps.h - Inner loops of paged_attention ----------*- C++ -*-===//
//
// The two loops of attention over a run of consecutive cache rows (one
// cache block's worth), for the query heads that share one KV head: the
// scores q·k and the weighted sum of V rows. A run is handled in one call
// so that the per-row work is inlined, vectorised code; chosen once per
// process for the best ISA. Head dims of any size (tails are masked or
// scalar).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/Gemm.h"

#include <cstdint>

namespace ingot::cpu {

struct AttentionOps {
  /// s[h * ldS + i] = scale * (q[h * d ..] · rows[i * stride ..]) for
  /// h < heads, i < count.
  void (*scores)(int64_t heads, int64_t d, const float *q, const float *rows,
                 int64_t count, int64_t stride, float scale, float *s,
                 int64_t ldS);
  /// acc[h * d + j] += sum_i p[h * ldP + i] * rows[i * stride + j] for
  /// h < heads, j < d.
  void (*accumulate)(int64_t heads, int64_t d, const float *p, int64_t ldP,
                     const float *rows, int64_t count, int64_t stride,
                     float *acc);
};

const AttentionOps &attentionOps(GemmIsa isa); // isa must be supported
/// The AVX-512 loops (AttentionOpsAvx512.cpp); attentionOps picks them.
const AttentionOps &avx512AttentionOps();
const AttentionOps &bestAttentionOps();

} // namespace ingot::cpu
