//===- Im2col.cpp - Receptive fields unrolled for conv's GEMM -------------===//
#include "cpu/Im2col.h"

#include <algorithm>
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

} // namespace

/// Columns [p0, p1) of im2col's matrix (output positions, row-major over
/// the output dims) into `col` laid out as `l` says: each row's runs copied
/// between the padding zeros (a plain copy at stride 1; per-element tap
/// arithmetic cost more than the GEMM).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
im2colRange(const float *x, int64_t channels, const Window &w, int64_t p0,
            int64_t p1, float *col, const ColLayout &l) {
  const std::vector<ColRun> runs = colRuns(w, p0, p1, l);
  const int64_t s = w.stride[2];
  int64_t r = 0;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t a = 0; a < w.k[0]; ++a)
      for (int64_t b = 0; b < w.k[1]; ++b)
        for (int64_t e = 0; e < w.k[2]; ++e, ++r) {
          const float *xc = x + c * w.inSize();
          int64_t lo, hi; // output columns whose tap e reads inside
          validRange(w, 2, e, &lo, &hi);
          const int64_t shift = e * w.dil[2] - w.pad[2];
          for (const ColRun &run : runs) {
            const int64_t i0 = tapSource(w, 0, run.o0, a),
                          i1 = tapSource(w, 1, run.o1, b);
            float *dst = col + run.dst + r * l.ld - run.a; // dst[o]: column o
            const bool inside = i0 >= 0 && i1 >= 0;
            const int64_t c0 = inside ? std::clamp(lo, run.a, run.b) : run.b;
            const int64_t c1 = inside ? std::clamp(hi, c0, run.b) : run.b;
            for (int64_t o = run.a; o < c0; ++o)
              dst[o] = 0.0f;
            const float *src =
                inside ? xc + (i0 * w.in[1] + i1) * w.in[2] + shift : xc;
            if (s == 1) // contiguous: vectorises
              for (int64_t o = c0; o < c1; ++o)
                dst[o] = src[o];
            else
              for (int64_t o = c0; o < c1; ++o)
                dst[o] = src[o * s];
            for (int64_t o = c1; o < run.b; ++o)
              dst[o] = 0.0f;
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
