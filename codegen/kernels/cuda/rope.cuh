//===- rope.cuh - Rotary position embedding (rotate-half) -------*- C++ -*-===//
//
// The CUDA counterpart of runtime/src/cpu/Rope.cpp and RopeMath.h: pairs
// (i, i + ROTARY_DIM/2) of each head are rotated by pos·inv_freq[i]; dims
// from ROTARY_DIM on pass through. The frequencies (with "linear" or
// "llama3" scaling), the angle and its cosine/sine are computed in double
// and rounded to f32, as the CPU does (at position 8192 an f32 angle would
// already be off by ~5e-4 rad); the rotation itself is f32 with explicitly
// rounded products, so no FMA contraction makes it differ from the CPU's
// or between `rope`, pagedKvWrite and pagedAttention (attention.cuh), which
// all rotate through ropeRotatePair.
//
// Launch of the standalone kernel `rope`: block 256 (any multiple of 32),
// grid.x = ceil(tokens * HEADS * HEAD_DIM / 2 / blockDim.x); one thread per
// rotary pair, and per pair of pass-through dims (copied unless y == x).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "prelude.cuh"

namespace ingot_k {

/// The rope attrs of a step. Doubles, as the CPU reads them (attrFloat):
/// the frequencies are computed from them in double, so an f32 field would
/// change every angle for values such as factor = 1.1.
struct RopeParams {
  int scaling; // 0 "none", 1 "linear", 2 "llama3"
  double theta, factor, lowFreqFactor, highFreqFactor;
  double originalMaxPositions;
};

/// inv_freq[i] = theta^(-2i/rotaryDim), rescaled as ropeInverseFrequencies
/// (Rope.cpp) does, operation for operation.
INGOT_DEVICE double ropeInvFreq(int i, int rotaryDim, const RopeParams &r) {
  double f = pow(r.theta, -2.0 * double(i) / double(rotaryDim));
  if (r.scaling == 1)
    f /= r.factor;
  if (r.scaling == 2) {
    // Long wavelengths are slowed by `factor`, short ones kept, and the
    // band in between interpolated (Llama 3.1).
    const double wavelen = 2.0 * 3.14159265358979323846 / f;
    const double om = r.originalMaxPositions;
    if (wavelen > om / r.lowFreqFactor) {
      f /= r.factor;
    } else if (wavelen >= om / r.highFreqFactor) {
      const double smooth = (om / wavelen - r.lowFreqFactor) /
                            (r.highFreqFactor - r.lowFreqFactor);
      f = (1.0 - smooth) * f / r.factor + smooth * f;
    }
  }
  return f;
}

/// The f32 cos/sin of rotary pair i at position `pos` (ropeAngles).
INGOT_DEVICE void ropeCosSin(i64 pos, int i, int rotaryDim,
                             const RopeParams &r, float &c, float &s) {
  double sd, cd;
  sincos(double(pos) * ropeInvFreq(i, rotaryDim, r), &sd, &cd);
  c = float(cd);
  s = float(sd);
}

/// (x1, x2) rotated as ropeRotateHead does; each product and sum rounded
/// on its own, as the CPU (built without FMA) rounds them.
INGOT_DEVICE void ropeRotatePair(float x1, float x2, float c, float s,
                                 float &y1, float &y2) {
  y1 = __fsub_rn(__fmul_rn(x1, c), __fmul_rn(x2, s));
  y2 = __fadd_rn(__fmul_rn(x2, c), __fmul_rn(x1, s));
}

/// Rotates one head of HEAD_DIM values from x into y (global or shared
/// memory), the work spread over `n` threads of which this is `t`: pair i
/// by one thread, computing its own cos/sin; pass-through dims copied. A
/// thread reads its pair before writing it, so y == x is fine. Callers
/// synchronise before others read y.
template <int HEAD_DIM, int ROTARY_DIM>
INGOT_DEVICE void ropeHead(const float *x, float *y, i64 pos,
                           const RopeParams &r, int t, int n) {
  static_assert(ROTARY_DIM > 0 && ROTARY_DIM % 2 == 0 &&
                    ROTARY_DIM <= HEAD_DIM,
                "rotary_dim must be even and in (0, head_dim]");
  constexpr int HALF = ROTARY_DIM / 2;
  for (int i = t; i < HALF; i += n) {
    float c, s;
    ropeCosSin(pos, i, ROTARY_DIM, r, c, s);
    ropeRotatePair(x[i], x[i + HALF], c, s, y[i], y[i + HALF]);
  }
  if (y != x)
    for (int d = ROTARY_DIM + t; d < HEAD_DIM; d += n)
      y[d] = x[d];
}

/// Element d of a head of HEAD_DIM values at x, rotated with the pair
/// tables cosv/sinv (ROTARY_DIM/2 each; unused when ROTARY_DIM == 0): for
/// writers that give each thread one output element. Computes the whole
/// pair so the element has the bits ropeRotatePair gives it.
template <int HEAD_DIM, int ROTARY_DIM>
INGOT_DEVICE float ropeElement(const float *x, int d, const float *cosv,
                               const float *sinv) {
  constexpr int HALF = ROTARY_DIM / 2;
  if constexpr (ROTARY_DIM > 0) {
    if (d < ROTARY_DIM) {
      const int i = d < HALF ? d : d - HALF;
      float y1, y2;
      ropeRotatePair(x[i], x[i + HALF], cosv[i], sinv[i], y1, y2);
      return d < HALF ? y1 : y2;
    }
  }
  return x[d];
}

/// y = rope(x) for x, y of [tokens, HEADS * HEAD_DIM]; y may alias x.
template <int HEADS, int HEAD_DIM, int ROTARY_DIM, typename I>
INGOT_DEVICE void rope(const float *x, const I *positions, float *y,
                       RopeParams r, i64 tokens) {
  static_assert(HEAD_DIM % 2 == 0, "one thread per pair of dims");
  static_assert(ROTARY_DIM > 0 && ROTARY_DIM % 2 == 0 &&
                    ROTARY_DIM <= HEAD_DIM,
                "rotary_dim must be even and in (0, head_dim]");
  constexpr int PAIRS = HEAD_DIM / 2, HALF = ROTARY_DIM / 2;
  const i64 g = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= tokens * HEADS * PAIRS)
    return;
  const i64 head = g / PAIRS; // token * HEADS + h
  const int item = int(g % PAIRS);
  const float *xh = x + head * HEAD_DIM;
  float *yh = y + head * HEAD_DIM;
  if (item < HALF) {
    float c, s;
    ropeCosSin(i64(positions[head / HEADS]), item, ROTARY_DIM, r, c, s);
    ropeRotatePair(xh[item], xh[item + HALF], c, s, yh[item],
                   yh[item + HALF]);
  } else if (y != x) {
    const int d = ROTARY_DIM + 2 * (item - HALF);
    yh[d] = xh[d];
    yh[d + 1] = xh[d + 1];
  }
}

} // namespace ingot_k
