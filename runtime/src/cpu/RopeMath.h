//===- RopeMath.h - Rotary embedding shared by rope and attention -*- C++
//-*-===//
//
// One definition of the rotate-half rotation, its frequencies and its
// per-token sines/cosines, used by the `rope` kernel and by
// `rope_paged_attention` (which rotates k as it is written to the cache and
// q as it is read). The fused kernel must give the same bits as `rope`
// followed by `paged_attention`, so both call these exact functions; the
// runtime is built without FMA (x86-64-v2), so `a * b - c * d` cannot be
// contracted differently at the two call sites.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelRegistry.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace ingot::cpu {

struct RopeParams {
  int64_t heads = 0, headDim = 0, rotaryDim = 0;
  double theta = 10000.0;
  std::string scaling;
  double factor = 8.0, lowFreqFactor = 1.0, highFreqFactor = 4.0;
  int64_t originalMax = 8192;
};

/// Reads and checks the rope attrs (num_heads, head_dim, rotary_dim, theta,
/// scaling and the llama3 parameters); defined in Rope.cpp.
Status readRopeParams(const KernelContext &ctx, RopeParams *p);

/// inv_freq[i] = theta^(-2i/rotary_dim), llama3-rescaled when asked.
std::vector<double> ropeInverseFrequencies(const RopeParams &p);

/// The f32 cos/sin of pos·inv_freq[i], i < half. The angle is formed and its
/// sine/cosine taken in double: at position 8192 an f32 angle is already off
/// by ~5e-4 rad, far more than the f32 rotation itself loses.
inline void ropeAngles(int64_t position, const double *invFreq, int64_t half,
                       float *cosv, float *sinv) {
  const double pos = double(position);
  for (int64_t i = 0; i < half; ++i) {
    const double angle = pos * invFreq[i];
    cosv[i] = float(std::cos(angle));
    sinv[i] = float(std::sin(angle));
  }
}

/// Rotates one head of `headDim` values: pairs (i, i + half) for
/// i < half = rotaryDim / 2; dims >= rotaryDim pass through. A pair is read
/// before either element is written, so y == x is fine.
inline void ropeRotateHead(const float *x, float *y, const float *cosv,
                           const float *sinv, int64_t rotaryDim,
                           int64_t headDim) {
  const int64_t half = rotaryDim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const float x1 = x[i], x2 = x[i + half];
    y[i] = x1 * cosv[i] - x2 * sinv[i];
    y[i + half] = x2 * cosv[i] + x1 * sinv[i];
  }
  if (y != x)
    for (int64_t i = rotaryDim; i < headDim; ++i)
      y[i] = x[i];
}

} // namespace ingot::cpu
