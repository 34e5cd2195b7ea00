//===- ConvImplicitInput.cpp - the rows the implicit conv's tiles read ----===//
//
// Where each (channel, tap) row of B comes from: x itself when the window
// reads it in place, or the stride-phase planes of a zero-padded copy
// (ConvImplicitParts.h: Planes, InputRows, addTail).
//
//===----------------------------------------------------------------------===//
#include "cpu/ConvImplicitParts.h"

#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ingot::cpu::implicit {
namespace {

/// n floats from src to dst (or zeros, src null) in fixed-size pieces the
/// compiler inlines as vector moves: planes of narrow maps are many short
/// lines, and the libc calls per line were a fifth of openWakeWord's
/// 48 -> 72 1x3 conv at 32 x 8 (perf).
inline void copyLine(float *dst, const float *src, int64_t n) {
  static constexpr float kZeros[16] = {};
  const auto piece = [&](int64_t j, size_t bytes) {
    std::memcpy(dst + j, src ? src + j : kZeros, bytes);
  };
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    piece(j, 64);
  for (int64_t len = 8; len >= 1; len /= 2)
    if (j + len <= n) {
      piece(j, size_t(len) * sizeof(float));
      j += len;
    }
}

bool unpadded(const Window &w) {
  return w.pad[1] == 0 && w.pad[2] == 0 && w.padEnd[1] == 0 && w.padEnd[2] == 0;
}

/// The planes would be x itself (wq = its width): each (channel, tap) row
/// points into it, except on the channels whose reads, up to `slack`
/// floats past a plane, would run past x's end: those point into `copy`,
/// the channels with `slack` zeros after them.
void pointIntoX(const Window &w, const float *x, int64_t c, int64_t slack,
                const float **rows, std::vector<float> &copy) {
  const int64_t plane = w.inSize();
  const int64_t copied = slack ? std::min(c, (slack + plane - 1) / plane) : 0;
  copy.assign(size_t(copied * plane + slack), 0.0f);
  std::copy_n(x + (c - copied) * plane, copied * plane, copy.data());
  for (int64_t ch = 0, r = 0; ch < c; ++ch) {
    const float *base = ch < c - copied
                            ? x + ch * plane
                            : copy.data() + (ch - c + copied) * plane;
    for (int64_t b = 0; b < w.k[1]; ++b)
      for (int64_t e = 0; e < w.k[2]; ++e, ++r)
        rows[r] = base + b * w.dil[1] * w.in[2] + e * w.dil[2];
  }
}

} // namespace

/// Every row of the plane in one call, cloned per ISA so that the stride-2
/// copy vectorises (a permute of two vectors per output vector).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
Planes::fill(const Window &w, const float *xc, int64_t ph, int64_t pw,
             float *plane) const {
  const int64_t h = w.in[1], width = w.in[2];
  // Column j reads input column j·sw + pw − pad: inside for j in [lo, hi).
  const int64_t first = w.pad[2] - pw;
  const int64_t lo = std::clamp<int64_t>((first + sw - 1) / sw, 0, wq);
  const int64_t hi = std::clamp<int64_t>((first + width + sw - 1) / sw, lo, wq);
  for (int64_t i = 0; i < hq; ++i) {
    float *dst = plane + i * wq;
    const int64_t si = i * sh + ph - w.pad[1];
    if (si < 0 || si >= h) {
      copyLine(dst, nullptr, wq);
      continue;
    }
    const float *src = xc + si * width + lo * sw - first;
    copyLine(dst, nullptr, lo);
    if (sw == 1)
      copyLine(dst + lo, src, hi - lo);
    else if (sw == 2)
      for (int64_t j = 0; j < hi - lo; ++j)
        dst[lo + j] = src[2 * j];
    else
      for (int64_t j = 0; j < hi - lo; ++j)
        dst[lo + j] = src[j * sw];
    copyLine(dst + hi, nullptr, wq - hi);
  }
  copyLine(plane + hq * wq, nullptr, size - hq * wq);
}

bool readsInPlace(const Window &w) {
  return w.k[1] * w.k[2] == 1 && w.stride[1] * w.stride[2] == 1 && unpadded(w);
}

InputRows::InputRows(KernelContext &ctx, const Window &w, const Planes &p,
                     const float *x, int64_t c, int nr, bool validOnly) {
  const int64_t kh = w.k[1], kw = w.k[2];
  rows.resize(size_t(c * kh * kw));
  const bool unitStride = w.stride[1] == 1 && w.stride[2] == 1;
  if (readsInPlace(w) || (unpadded(w) && (validOnly || unitStride))) {
    // A row tile reads up to nr columns past its last, and a tap dx
    // further (1x1 convs read addTail's copy there instead).
    const int64_t slack =
        validOnly || readsInPlace(w) ? 0 : (kw - 1) * w.dil[2] + nr;
    pointIntoX(w, x, c, slack, rows.data(), lastChannels);
    return;
  }
  float *planes =
      scratch(kPlanesScratch, size_t(c * p.count() * p.size), planesOneOff);
  ctx.parallelFor(c * p.count(), 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      p.fill(w, x + i / p.count() * w.inSize(), i % p.count() / p.sw, i % p.sw,
             planes + i * p.size);
  });
  for (int64_t ch = 0, r = 0; ch < c; ++ch)
    for (int64_t b = 0; b < kh; ++b)
      for (int64_t e = 0; e < kw; ++e, ++r) {
        const int64_t dy = b * w.dil[1], dx = e * w.dil[2];
        const int64_t plane = (ch * p.sh + dy % p.sh) * p.sw + dx % p.sw;
        rows[size_t(r)] =
            planes + plane * p.size + dy / p.sh * p.wq + dx / p.sw;
      }
}

/// In place: the tail of the chunk starting at column `lastQ0` (the last
/// one) past its whole multiples of `step` columns, when there is one;
/// a tail tile reads at most nr columns.
void addTail(InputRows &in, const Window &w, const float *x, int64_t c,
             int64_t lastQ0, int64_t step, int nr) {
  const int64_t outSize = w.outSize();
  const int64_t start = lastQ0 + (outSize - lastQ0) / step * step;
  if (start == outSize)
    return;
  in.tailStart = start;
  in.tail.assign(size_t(c * nr), 0.0f);
  in.tailRows.resize(size_t(c));
  for (int64_t ch = 0; ch < c; ++ch) {
    float *dst = in.tail.data() + ch * nr;
    std::copy(x + ch * w.inSize() + start, x + ch * w.inSize() + outSize, dst);
    in.tailRows[size_t(ch)] = dst;
  }
}

} // namespace ingot::cpu::implicit
