//===- ConvDepthwise.cpp - Depthwise conv, direct per-channel loops -------===//
//
// C/g = 1: im2col + a GEMM of one row per channel would run 1-row GEMMs
// serially; instead each (image, output channel) is one task of direct
// convolution. The task first writes its input channel with the padding
// as zeros, so every output reads all its taps without a bounds check,
// then computes each output line in register chunks. (With taps checked
// one by one at each line's edges and tail, PP-OCRv4's 5x5 depthwise
// convs ran at about 10 GFLOP/s.) At stride 1 a chunk is one 16-float
// vector value and four chunks go together, so the four multiply-add
// chains overlap: PP-OCRv4-rec's [1, 480, 3, 160] 5x5 conv went from
// 0.72 to 0.40 ms on one thread (the best of 500 runs).
//
//===----------------------------------------------------------------------===//
#include "cpu/ConvWindow.h"

#include <algorithm>
#include <vector>

namespace ingot::cpu {
namespace {

/// Outputs per chunk of a depthwise row: one AVX-512 vector (two AVX2).
constexpr int64_t kDepthwiseChunk = 16;

/// One input channel with its padding written out as zeros, as far as any
/// tap reaches.
struct PaddedChannel {
  int64_t ext[kSpatial] = {1, 1, 1};
  std::vector<float> data;

  void fill(const Window &w, const float *x) {
    for (int d = 0; d < kSpatial; ++d)
      ext[d] = std::max(w.pad[d] + w.in[d], (w.out[d] - 1) * w.stride[d] +
                                                (w.k[d] - 1) * w.dil[d] + 1);
    data.assign(size_t(ext[0] * ext[1] * ext[2]), 0.0f);
    for (int64_t i0 = 0; i0 < w.in[0]; ++i0)
      for (int64_t i1 = 0; i1 < w.in[1]; ++i1)
        std::copy_n(x + (i0 * w.in[1] + i1) * w.in[2], w.in[2],
                    row(i0 + w.pad[0], i1 + w.pad[1]) + w.pad[2]);
  }
  float *row(int64_t i0, int64_t i1) {
    return data.data() + (i0 * ext[1] + i1) * ext[2];
  }
  const float *row(int64_t i0, int64_t i1) const {
    return data.data() + (i0 * ext[1] + i1) * ext[2];
  }
};

/// 16 floats as one value: a zmm in the AVX-512 clone, two ymm in the
/// AVX2 one, four xmm in the baseline.
typedef float Floats16 __attribute__((vector_size(64)));

/// kChunks whole chunks at stride 1 from output o: each tap is one
/// (unaligned) 16-float load and one multiply-add per chunk, the chunks'
/// sums independent chains that hide the multiply-add latency. Written as
/// a loop over acc[j], GCC kept the sums in memory and spent 3 shuffles
/// per tap (16 GFLOP/s on PP-OCRv4's 5x5 depthwise convs, one thread).
template <int kChunks>
inline void depthwiseChunks16(const std::vector<const float *> &taps,
                              const float *k, float bias, const Window &w,
                              int64_t o, float *y) {
  Floats16 acc[kChunks] = {};
  for (size_t ab = 0; ab < taps.size(); ++ab)
    for (int64_t e = 0; e < w.k[2]; ++e) {
      const float wv = k[int64_t(ab) * w.k[2] + e];
      const float *src = taps[ab] + o + e * w.dil[2];
      for (int c = 0; c < kChunks; ++c) {
        Floats16 v;
        __builtin_memcpy(&v, src + c * kDepthwiseChunk, sizeof v);
        acc[c] += wv * v;
      }
    }
  for (int c = 0; c < kChunks; ++c) {
    acc[c] += bias;
    __builtin_memcpy(y + o + c * kDepthwiseChunk, &acc[c], sizeof acc[c]);
  }
}

/// Outputs [o, o + n) of a line (n <= kDepthwiseChunk), taps in (d, h, w)
/// order from 0, then the bias: the order of the reference definition.
template <int64_t kStride, int64_t kWidth>
inline void depthwiseChunk(const std::vector<const float *> &taps,
                           const float *k, float bias, const Window &w,
                           int64_t o, int64_t n, float *y) {
  if constexpr (kStride == 1 && kWidth == kDepthwiseChunk)
    return depthwiseChunks16<1>(taps, k, bias, w, o, y);
  const int64_t s = kStride > 0 ? kStride : w.stride[2];
  const int64_t width = kWidth > 0 ? kWidth : n;
  float acc[kDepthwiseChunk] = {};
  for (size_t ab = 0; ab < taps.size(); ++ab)
    for (int64_t e = 0; e < w.k[2]; ++e) {
      const float wv = k[int64_t(ab) * w.k[2] + e];
      const float *src = taps[ab] + o * s + e * w.dil[2];
      for (int64_t j = 0; j < width; ++j)
        acc[j] += wv * src[j * s];
    }
  for (int64_t j = 0; j < width; ++j)
    y[o + j] = acc[j] + bias;
}

/// A line of outputs in whole chunks; a last partial one is recomputed
/// overlapping the one before (the same sums, the same bits).
template <int64_t kStride>
inline void depthwiseLine(const std::vector<const float *> &taps,
                          const float *k, float bias, const Window &w,
                          float *y) {
  const int64_t n = w.out[2];
  if (n < kDepthwiseChunk)
    return depthwiseChunk<kStride, 0>(taps, k, bias, w, 0, n, y);
  int64_t o = 0;
  if constexpr (kStride == 1)
    for (; o + 4 * kDepthwiseChunk <= n; o += 4 * kDepthwiseChunk)
      depthwiseChunks16<4>(taps, k, bias, w, o, y);
  for (; o + kDepthwiseChunk <= n; o += kDepthwiseChunk)
    depthwiseChunk<kStride, kDepthwiseChunk>(taps, k, bias, w, o,
                                             kDepthwiseChunk, y);
  if (o < n)
    depthwiseChunk<kStride, kDepthwiseChunk>(
        taps, k, bias, w, n - kDepthwiseChunk, kDepthwiseChunk, y);
}

/// One output channel of a depthwise conv from its padded input channel,
/// line by line. Cloned for AVX2 and AVX-512 (picked at load by the CPU's
/// features), the baseline being 4 floats wide; strides 1 and 2 along the
/// line get loops of their own.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
depthwiseChannel(const PaddedChannel &p, const float *k, float bias,
                 const Window &w, std::vector<const float *> &taps, float *y) {
  taps.resize(size_t(w.k[0] * w.k[1]));
  for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < w.out[1]; ++o1) {
      for (int64_t a = 0; a < w.k[0]; ++a)
        for (int64_t b = 0; b < w.k[1]; ++b)
          taps[size_t(a * w.k[1] + b)] = p.row(o0 * w.stride[0] + a * w.dil[0],
                                               o1 * w.stride[1] + b * w.dil[1]);
      float *row = y + (o0 * w.out[1] + o1) * w.out[2];
      if (w.stride[2] == 1)
        depthwiseLine<1>(taps, k, bias, w, row);
      else if (w.stride[2] == 2)
        depthwiseLine<2>(taps, k, bias, w, row);
      else
        depthwiseLine<0>(taps, k, bias, w, row);
    }
}

} // namespace

void depthwiseConv(KernelContext &ctx, const Window &w, int64_t n, int64_t c,
                   int64_t m, linear::Act act, float *y) {
  const float *x = ctx.input(0).as<float>(), *wt = ctx.input(1).as<float>();
  const float *bias = ctx.hasInput(2) ? ctx.input(2).as<float>() : nullptr;
  const int64_t mg = m / c, taps = w.k[0] * w.k[1] * w.k[2];
  const int64_t inSize = w.inSize(), outSize = w.outSize();
  const int64_t grain =
      std::max<int64_t>(1, 32768 / std::max<int64_t>(1, outSize * taps));
  ctx.parallelFor(n * m, grain, [&](int64_t begin, int64_t end) {
    PaddedChannel padded;
    std::vector<const float *> tapRows;
    int64_t filled = -1; // the input channel `padded` holds
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / m, o = t % m, in = b * c + o / mg;
      if (in != filled)
        padded.fill(w, x + in * inSize), filled = in;
      depthwiseChannel(padded, wt + o * taps, bias ? bias[o] : 0.0f, w, tapRows,
                       y + t * outSize);
      linear::activate(act, y + t * outSize, outSize);
    }
  });
}

} // namespace ingot::cpu
