//===- Im2col.cpp - Receptive fields unrolled for conv's GEMM -------------===//
#include "cpu/Im2col.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace ingot::cpu {
namespace {

/// A run of output positions inside one output line and one panel of the
/// column layout: where im2col writes it does not depend on the row, so
/// the runs of a range are found once (no division per row).
struct ColRun {
  int64_t o0, o1; // the line's output coordinates along dims 0 and 1
  int64_t a, b;   // output columns [a, b) along the last dim
  int64_t dst;    // where output column `a` of row 0 goes
};

std::vector<ColRun> colRuns(const Window &w, int64_t p0, int64_t p1,
                            const ColLayout &l) {
  std::vector<ColRun> runs;
  const int64_t ow = w.out[2];
  for (int64_t p = p0; p < p1;) {
    const int64_t line = p / ow, o2 = p % ow;
    const int64_t end = std::min(p1, p + (ow - o2));
    for (int64_t q = p; q < end;) {
      const int64_t j = q - p0, inPanel = j % l.width;
      const int64_t qe = std::min(end, q + (l.width - inPanel));
      runs.push_back({line / w.out[1], line % w.out[1], q - p + o2, qe - p + o2,
                      j / l.width * l.panelStride + inPanel});
      q = qe;
    }
    p = end;
  }
  return runs;
}

/// Whether every tap of `w` reads the input plane shifted by a fixed
/// offset: a 1-D or 2-D conv of stride 1 whose output rows are as wide as
/// its input rows (a 3x3 conv padded by 1, TensorFlow's 1x3 and 3x1
/// pairs). Output position p = o1 * W + o2 then reads input p + shift.
bool isShiftedCopy(const Window &w) {
  return w.in[0] == 1 && w.out[0] == 1 && w.k[0] == 1 && w.stride[1] == 1 &&
         w.stride[2] == 1 && w.in[2] == w.out[2];
}

/// `n` zeros at `dst` (a helper the compiler keeps as a plain loop).
inline void zeros(float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = 0.0f;
}

/// im2col when isShiftedCopy(w): each tap's row of a chunk of columns is
/// one copy of the input shifted by (b·dil − pad) rows and (e·dil − pad)
/// columns, zeros where that leaves the plane or, for a column shift,
/// where it crosses a line's end: those positions depend on the tap's
/// column alone, so a mask per kernel column, made once, selects them in
/// the same vector pass as the copy (zeroing them line by line cost as
/// much as the GEMM on openWakeWord's 4-wide 1x3 convs). Chunks (the
/// GEMM's panels) are outermost so that the writes of one panel are
/// contiguous. The general path below works per output line and cost as
/// much as the GEMM on oww-embedding's 1x3/3x1 convs.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
im2colShifted(const float *x, int64_t channels, const Window &w, int64_t p0,
              int64_t p1, float *col, const ColLayout &l) {
  const int64_t width = w.in[2], inSize = w.inSize(), kw = w.k[2];
  struct Tap {
    const float *src; // the input at output position 0's tap
    int64_t shift, e;
  };
  std::vector<Tap> taps;
  taps.reserve(size_t(channels * w.k[1] * kw));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t b = 0; b < w.k[1]; ++b)
      for (int64_t e = 0; e < kw; ++e) {
        const int64_t dc = e * w.dil[2] - w.pad[2];
        const int64_t shift = (b * w.dil[1] - w.pad[1]) * width + dc;
        taps.push_back({x + c * inSize + shift, shift, e});
      }
  // keep[e * n + (p − p0)]: 1 where kernel column e of position p reads
  // inside its own line.
  const int64_t n = p1 - p0;
  std::vector<float> keep(size_t(kw * n));
  for (int64_t e = 0; e < kw; ++e)
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t col = p % width + e * w.dil[2] - w.pad[2];
      keep[size_t(e * n + p - p0)] = col >= 0 && col < width ? 1.0f : 0.0f;
    }
  for (int64_t j0 = 0; j0 < n;) {
    const int64_t inPanel = j0 % l.width;
    const int64_t j1 = std::min(n, j0 + l.width - inPanel);
    // Output positions [a, z); row r's dst[p] is position p.
    const int64_t a = p0 + j0, z = p0 + j1;
    float *chunk = col + (j0 / l.width) * l.panelStride + inPanel - a;
    for (size_t r = 0; r < taps.size(); ++r) {
      const Tap &t = taps[r];
      float *dst = chunk + int64_t(r) * l.ld;
      // Locals, so that the stores need not reload them.
      const float *src = t.src, *mask = keep.data() + t.e * n - p0;
      const int64_t lo = std::clamp(-t.shift, a, z);
      const int64_t hi = std::clamp(inSize - t.shift, lo, z);
      zeros(dst + a, lo - a);
      for (int64_t p = lo; p < hi; ++p) {
        const float v = src[p];
        dst[p] = mask[p] != 0.0f ? v : 0.0f;
      }
      zeros(dst + hi, z - hi);
    }
    j0 = j1;
  }
}

/// One run of one kernel tap, the same for every channel: zeros in output
/// columns [a, c0) and [c1, b), input values in [c0, c1) read from the
/// channel's plane at src + o·stride, written from dst (row 0's offset of
/// column a).
struct TapRun {
  int64_t dst, a, c0, c1, b, src;
};

/// Each tap's runs, tap-major (taps in im2col's row order within a
/// channel), found once per call rather than once per channel.
std::vector<TapRun> tapRuns(const Window &w, const std::vector<ColRun> &runs) {
  std::vector<TapRun> out;
  out.reserve(size_t(w.k[0] * w.k[1] * w.k[2]) * runs.size());
  for (int64_t a = 0; a < w.k[0]; ++a)
    for (int64_t b = 0; b < w.k[1]; ++b)
      for (int64_t e = 0; e < w.k[2]; ++e) {
        int64_t lo, hi; // output columns whose tap e reads inside
        validRange(w, 2, e, &lo, &hi);
        const int64_t shift = e * w.dil[2] - w.pad[2];
        for (const ColRun &run : runs) {
          const int64_t i0 = tapSource(w, 0, run.o0, a),
                        i1 = tapSource(w, 1, run.o1, b);
          const bool inside = i0 >= 0 && i1 >= 0;
          const int64_t c0 = inside ? std::clamp(lo, run.a, run.b) : run.b;
          const int64_t c1 = inside ? std::clamp(hi, c0, run.b) : run.b;
          out.push_back({run.dst, run.a, c0, c1, run.b,
                         inside ? (i0 * w.in[1] + i1) * w.in[2] + shift : 0});
        }
      }
  return out;
}

} // namespace

/// Columns [p0, p1) of im2col's matrix (output positions, row-major over
/// the output dims) into `col` laid out as `l` says: each row's runs copied
/// between the padding zeros (a plain copy at stride 1; per-element tap
/// arithmetic cost more than the GEMM). The runs' bounds are worked out
/// per tap, once: per channel and tap they were most of the time of
/// Silero VAD's 1- to 4-frame convs, whose runs are a value or two long.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
im2colRange(const float *x, int64_t channels, const Window &w, int64_t p0,
            int64_t p1, float *col, const ColLayout &l) {
  if (isShiftedCopy(w))
    return im2colShifted(x, channels, w, p0, p1, col, l);
  const std::vector<ColRun> runs = colRuns(w, p0, p1, l);
  const std::vector<TapRun> plan = tapRuns(w, runs);
  const int64_t s = w.stride[2], perTap = int64_t(runs.size());
  const int64_t taps = w.k[0] * w.k[1] * w.k[2];
  for (int64_t c = 0; c < channels; ++c) {
    const float *xc = x + c * w.inSize();
    for (int64_t t = 0; t < taps; ++t) {
      float *row = col + (c * taps + t) * l.ld;
      for (const TapRun *tr = plan.data() + t * perTap, *end = tr + perTap;
           tr != end; ++tr) {
        float *dst = row + tr->dst - tr->a; // dst[o]: column o
        const float *src = xc + tr->src;
        for (int64_t o = tr->a; o < tr->c0; ++o)
          dst[o] = 0.0f;
        if (s == 1) // contiguous: vectorises
          for (int64_t o = tr->c0; o < tr->c1; ++o)
            dst[o] = src[o];
        else
          for (int64_t o = tr->c0; o < tr->c1; ++o)
            dst[o] = src[o * s];
        for (int64_t o = tr->c1; o < tr->b; ++o)
          dst[o] = 0.0f;
      }
    }
  }
}

/// The plain column matrix of columns [p0, p1).
ColLayout plainLayout(int64_t p0, int64_t p1) {
  return {p1 - p0, std::max<int64_t>(p1 - p0, 1), 0};
}

int64_t panelCount(int64_t columns, int64_t nr) {
  return (columns + nr - 1) / nr;
}

/// Columns [p0, p1) of im2col's matrix unrolled straight into `packed`'s
/// panels q0..q1 (k rows of NR positions each), the layout the GEMM
/// micro-kernel reads: no column matrix to write and then pack again.
void im2colPanels(const float *x, int64_t channels, const Window &w, int64_t p0,
                  int64_t p1, PackedB &packed, int64_t q0, int64_t q1) {
  const int64_t nr = packed.nr(), k = packed.k();
  const int64_t first = p0 + q0 * nr, last = std::min(p1, p0 + q1 * nr);
  im2colRange(x, channels, w, first, last, packed.panelData(q0),
              ColLayout{nr, nr, k * nr});
}

} // namespace ingot::cpu
