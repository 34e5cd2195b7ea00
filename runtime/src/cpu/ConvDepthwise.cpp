//===- ConvDepthwise.cpp - Depthwise conv, direct per-channel loops -------===//
//
// C/g = 1: im2col + a GEMM of one row per channel would run 1-row GEMMs
// serially; instead each (image, output channel) is one task of direct
// convolution, line by line, the interior outputs in register chunks.
//
//===----------------------------------------------------------------------===//
#include "cpu/ConvWindow.h"

#include <vector>

namespace ingot::cpu {
namespace {

/// Outputs per chunk of a depthwise row: one AVX-512 vector (two AVX2).
constexpr int64_t kDepthwiseChunk = 16;

/// The input rows (dims 0 and 1) the taps of output line (o0, o1) read,
/// null where a tap lies in the padding; tap (a, b) at a * k[1] + b.
void depthwiseTapRows(const float *x, const Window &w, int64_t o0, int64_t o1,
                      std::vector<const float *> &rows) {
  rows.assign(size_t(w.k[0] * w.k[1]), nullptr);
  for (int64_t a = 0; a < w.k[0]; ++a) {
    const int64_t i0 = tapSource(w, 0, o0, a);
    for (int64_t b = 0; b < w.k[1] && i0 >= 0; ++b)
      if (const int64_t i1 = tapSource(w, 1, o1, b); i1 >= 0)
        rows[size_t(a * w.k[1] + b)] = x + (i0 * w.in[1] + i1) * w.in[2];
  }
}

/// One output y[o] of a line: its taps in (d, h, w) order from 0, then the
/// bias, checking each tap against the padding.
inline float depthwiseOne(const std::vector<const float *> &rows,
                          const float *k, float bias, const Window &w,
                          int64_t o) {
  float acc = 0.0f;
  for (int64_t ab = 0; ab < int64_t(rows.size()); ++ab) {
    if (!rows[size_t(ab)])
      continue;
    for (int64_t e = 0; e < w.k[2]; ++e)
      if (const int64_t i = tapSource(w, 2, o, e); i >= 0)
        acc += k[ab * w.k[2] + e] * rows[size_t(ab)][i];
  }
  return acc + bias;
}

/// Outputs [lo, hi) of a line whose taps all read inside along the last
/// dim, kDepthwiseChunk at a time with the sums in registers: the same
/// (d, h, w) order from 0, then the bias, as depthwiseOne, so every
/// output has the same bits whichever path computed it.
template <int64_t kStride>
inline void depthwiseInterior(const std::vector<const float *> &rows,
                              const float *k, float bias, const Window &w,
                              int64_t lo, int64_t hi, float *y) {
  const int64_t s = kStride > 0 ? kStride : w.stride[2];
  int64_t o = lo;
  for (; o + kDepthwiseChunk <= hi; o += kDepthwiseChunk) {
    float acc[kDepthwiseChunk] = {};
    for (int64_t ab = 0; ab < int64_t(rows.size()); ++ab) {
      const float *in = rows[size_t(ab)];
      if (!in)
        continue;
      for (int64_t e = 0; e < w.k[2]; ++e) {
        const float wv = k[ab * w.k[2] + e];
        const float *src = in + o * s + e * w.dil[2] - w.pad[2];
        for (int64_t j = 0; j < kDepthwiseChunk; ++j)
          acc[j] += wv * src[j * s];
      }
    }
    for (int64_t j = 0; j < kDepthwiseChunk; ++j)
      y[o + j] = acc[j] + bias;
  }
  for (; o < hi; ++o)
    y[o] = depthwiseOne(rows, k, bias, w, o);
}

/// One output channel of a depthwise conv (one input channel per group),
/// line by line: the outputs whose taps all read inside go in register
/// chunks, the few at the edges one by one. Cloned for AVX2 and AVX-512
/// (picked at load by the CPU's features), the baseline being 4 floats
/// wide; strides 1 and 2 get loops of their own.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
depthwiseChannel(const float *x, const float *k, float bias, const Window &w,
                 float *y) {
  const int64_t rowLen = w.out[2];
  // Outputs along the last dim whose every tap reads inside.
  int64_t lo = 0, hi = rowLen;
  for (int64_t e = 0; e < w.k[2]; ++e) {
    int64_t l, h;
    validRange(w, 2, e, &l, &h);
    lo = std::max(lo, l), hi = std::min(hi, h);
  }
  hi = std::max(lo, hi);
  std::vector<const float *> rows;
  for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < w.out[1]; ++o1) {
      float *row = y + (o0 * w.out[1] + o1) * rowLen;
      depthwiseTapRows(x, w, o0, o1, rows);
      for (int64_t o = 0; o < lo; ++o)
        row[o] = depthwiseOne(rows, k, bias, w, o);
      if (w.stride[2] == 1)
        depthwiseInterior<1>(rows, k, bias, w, lo, hi, row);
      else if (w.stride[2] == 2)
        depthwiseInterior<2>(rows, k, bias, w, lo, hi, row);
      else
        depthwiseInterior<0>(rows, k, bias, w, lo, hi, row);
      for (int64_t o = hi; o < rowLen; ++o)
        row[o] = depthwiseOne(rows, k, bias, w, o);
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
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / m, o = t % m;
      depthwiseChannel(x + (b * c + o / mg) * inSize, wt + o * taps,
                       bias ? bias[o] : 0.0f, w, y + t * outSize);
      linear::activate(act, y + t * outSize, outSize);
    }
  });
}

} // namespace ingot::cpu
