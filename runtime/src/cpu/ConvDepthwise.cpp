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
    data.resize(size_t(ext[0] * ext[1] * ext[2]));
    // Each element written once: zeros where no input lands, the input
    // rows between (zeroing all first cost a fifth of a [240, 3, 160] conv).
    float *at = data.data();
    for (int64_t i0 = 0; i0 < ext[0]; ++i0)
      for (int64_t i1 = 0; i1 < ext[1]; ++i1, at += ext[2]) {
        const int64_t s0 = i0 - w.pad[0], s1 = i1 - w.pad[1];
        if (s0 < 0 || s0 >= w.in[0] || s1 < 0 || s1 >= w.in[1]) {
          std::fill(at, at + ext[2], 0.0f);
          continue;
        }
        std::fill(at, at + w.pad[2], 0.0f);
        std::copy_n(x + (s0 * w.in[1] + s1) * w.in[2], w.in[2], at + w.pad[2]);
        std::fill(at + w.pad[2] + w.in[2], at + ext[2], 0.0f);
      }
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

/// kChunks whole chunks at stride 1 from output o of kLines output lines
/// together: `rows` are the padded input rows the lines read, line j reading
/// rows[j·sh + b] for its kh tap rows b. Each tap is one (unaligned) 16-float
/// load per chunk and row, used by every line that tap reaches, and the sums
/// are independent chains that hide the multiply-add latency. Every sum
/// still adds its taps in (h, w) order from 0, as the reference does.
/// Written as a loop over acc[j], GCC kept the sums in memory and spent 3
/// shuffles per tap (16 GFLOP/s on PP-OCRv4's 5x5 depthwise convs, one
/// thread); two lines per pass halve the loads per multiply-add.
template <int kChunks, int kLines>
__attribute__((always_inline)) inline void
depthwiseChunks16(const float *const *rows, int64_t kh, int64_t sh,
                  const float *k, float bias, const Window &w, int64_t o,
                  float *const *y) {
  static_assert(kLines == 1 || kLines == 2);
  Floats16 acc[kLines][kChunks] = {};
  const int64_t kw = w.k[2];
  const int64_t numRows = (kLines - 1) * sh + kh;
  for (int64_t r = 0; r < numRows; ++r) {
    // Row r is tap row r of line 0 and r - sh of line 1 (constant indices
    // into acc keep the sums in registers).
    const float *k0 = r < kh ? k + r * kw : nullptr;
    const float *k1 = kLines == 2 && r >= sh ? k + (r - sh) * kw : nullptr;
    for (int64_t e = 0; e < kw; ++e) {
      Floats16 v[kChunks];
      const float *src = rows[r] + o + e * w.dil[2];
      for (int c = 0; c < kChunks; ++c)
        __builtin_memcpy(&v[c], src + c * kDepthwiseChunk, sizeof v[c]);
      if (k0)
        for (int c = 0; c < kChunks; ++c)
          acc[0][c] += k0[e] * v[c];
      if constexpr (kLines == 2)
        if (k1)
          for (int c = 0; c < kChunks; ++c)
            acc[kLines - 1][c] += k1[e] * v[c];
    }
  }
  for (int j = 0; j < kLines; ++j)
    for (int c = 0; c < kChunks; ++c) {
      acc[j][c] += bias;
      __builtin_memcpy(y[j] + o + c * kDepthwiseChunk, &acc[j][c],
                       sizeof acc[j][c]);
    }
}

/// kLines lines of outputs at stride 1 along the line, in whole chunks
/// (four, then two, then one at a time); a last partial chunk is
/// recomputed overlapping the one before (the same sums, the same bits).
template <int kLines>
__attribute__((always_inline)) inline void
depthwiseLines16(const float *const *rows, int64_t kh, int64_t sh,
                 const float *k, float bias, const Window &w, float *const *y) {
  const int64_t n = w.out[2];
  int64_t o = 0;
  for (; o + 4 * kDepthwiseChunk <= n; o += 4 * kDepthwiseChunk)
    depthwiseChunks16<4, kLines>(rows, kh, sh, k, bias, w, o, y);
  if (o + 2 * kDepthwiseChunk <= n) {
    depthwiseChunks16<2, kLines>(rows, kh, sh, k, bias, w, o, y);
    o += 2 * kDepthwiseChunk;
  }
  if (o + kDepthwiseChunk <= n) {
    depthwiseChunks16<1, kLines>(rows, kh, sh, k, bias, w, o, y);
    o += kDepthwiseChunk;
  }
  if (o < n)
    depthwiseChunks16<1, kLines>(rows, kh, sh, k, bias, w, n - kDepthwiseChunk,
                                 y);
}

/// Outputs [o, o + n) of a line (n <= kDepthwiseChunk), taps in (d, h, w)
/// order from 0, then the bias: the order of the reference definition.
template <int64_t kStride, int64_t kWidth>
inline void depthwiseChunk(const std::vector<const float *> &taps,
                           const float *k, float bias, const Window &w,
                           int64_t o, int64_t n, float *y) {
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
  for (; o + kDepthwiseChunk <= n; o += kDepthwiseChunk)
    depthwiseChunk<kStride, kDepthwiseChunk>(taps, k, bias, w, o,
                                             kDepthwiseChunk, y);
  if (o < n)
    depthwiseChunk<kStride, kDepthwiseChunk>(
        taps, k, bias, w, n - kDepthwiseChunk, kDepthwiseChunk, y);
}

/// One output channel of a depthwise conv from its padded input channel.
/// At stride 1 along the line (with 16 outputs or more), a 2-D conv takes
/// two output lines per pass, which share most of their input rows; other
/// windows go line by line. Cloned for AVX2 and AVX-512 (picked at load by
/// the CPU's features), the baseline being 4 floats wide.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
depthwiseChannel(const PaddedChannel &p, const float *k, float bias,
                 const Window &w, std::vector<const float *> &taps, float *y) {
  const bool vectorLines = w.stride[2] == 1 && w.out[2] >= kDepthwiseChunk;
  const bool linePairs = vectorLines && w.k[0] == 1 && w.dil[1] == 1;
  const int64_t sh = w.stride[1];
  taps.resize(size_t(w.k[0] * w.k[1] + (linePairs ? sh : 0)));
  for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < w.out[1]; o1 += linePairs ? 2 : 1) {
      const int lines = linePairs && o1 + 1 < w.out[1] ? 2 : 1;
      float *out[2] = {y + (o0 * w.out[1] + o1) * w.out[2], nullptr};
      out[1] = out[0] + w.out[2];
      if (linePairs) {
        for (int64_t r = 0; r < (lines - 1) * sh + w.k[1]; ++r)
          taps[size_t(r)] = p.row(o0 * w.stride[0], o1 * sh + r);
      } else {
        for (int64_t a = 0; a < w.k[0]; ++a)
          for (int64_t b = 0; b < w.k[1]; ++b)
            taps[size_t(a * w.k[1] + b)] =
                p.row(o0 * w.stride[0] + a * w.dil[0], o1 * sh + b * w.dil[1]);
      }
      if (lines == 2)
        depthwiseLines16<2>(taps.data(), w.k[1], sh, k, bias, w, out);
      else if (vectorLines)
        depthwiseLines16<1>(taps.data(), w.k[0] * w.k[1], sh, k, bias, w, out);
      else if (w.stride[2] == 1)
        depthwiseLine<1>(taps, k, bias, w, out[0]);
      else if (w.stride[2] == 2)
        depthwiseLine<2>(taps, k, bias, w, out[0]);
      else
        depthwiseLine<0>(taps, k, bias, w, out[0]);
    }
}

} // namespace

void depthwiseConv(KernelContext &ctx, const Window &w, int64_t n, int64_t c,
                   int64_t m, const ConvActivation &act, float *y) {
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
      act.apply(y + t * outSize, outSize);
    }
  });
}

} // namespace ingot::cpu
