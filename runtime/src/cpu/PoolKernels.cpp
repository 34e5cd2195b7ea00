//===- PoolKernels.cpp - max/average pooling over conv windows ------------===//
//
// MaxPool and AveragePool walk the windows of ConvWindow.h; global average
// pooling sums each plane in double.
//
//===----------------------------------------------------------------------===//
#include "cpu/ConvWindow.h"

#include <algorithm>
#include <cmath>

namespace ingot::cpu {
namespace {

/// The larger of two values, NaN winning as in the per-window loop below.
/// Written as one select on non-short-circuit tests so that it compiles to
/// compare-and-blend: with `||`, random data mispredicted a branch per
/// element (a 2x2 pool of 55k values took 320 us instead of ~30).
inline float maxOrNan(float acc, float v) {
  const bool take = (v > acc) | ((v != v) & (acc == acc));
  return take ? v : acc;
}

/// One input row's maxima over each output column's window: columns
/// [lo, hi) read their taps without bounds checks, one strided pass per tap
/// (simple loops the compiler vectorises), the edge columns tap by tap.
__attribute__((always_inline)) inline void
rowMaxima(const Window &w, const float *xr, int64_t lo, int64_t hi, float *m) {
  const int64_t s = w.stride[2], d = w.dil[2], outCols = w.out[2];
  for (int64_t o = 0; o < outCols; ++o) {
    if (o == lo && lo < hi) {
      o = hi - 1;
      continue;
    }
    float acc = -INFINITY;
    for (int64_t e = 0; e < w.k[2]; ++e)
      if (int64_t i = tapSource(w, 2, o, e); i >= 0)
        acc = maxOrNan(acc, xr[i]);
    m[o] = acc;
  }
  if (lo >= hi)
    return;
  const float *x0 = xr + lo * s - w.pad[2];
  float *mo = m + lo;
  const int64_t n = hi - lo;
  for (int64_t o = 0; o < n; ++o)
    mo[o] = x0[o * s];
  for (int64_t e = 1; e < w.k[2]; ++e) {
    const float *xe = x0 + e * d;
    for (int64_t o = 0; o < n; ++o)
      mo[o] = maxOrNan(mo[o], xe[o * s]);
  }
}

/// Each output's maximum over the row maxima of its window's rows.
__attribute__((always_inline)) inline void
columnMaxima(const Window &w, const float *rowMax, float *y) {
  const int64_t outRows = w.out[1], outCols = w.out[2];
  for (int64_t o1 = 0; o1 < outRows; ++o1) {
    float *out = y + o1 * outCols;
    std::fill(out, out + outCols, -INFINITY);
    for (int64_t b = 0; b < w.k[1]; ++b)
      if (int64_t i = tapSource(w, 1, o1, b); i >= 0)
        for (int64_t o = 0; o < outCols; ++o)
          out[o] = maxOrNan(out[o], rowMax[i * outCols + o]);
  }
}

/// A 2-D max pool (no argmax) as two 1-D passes: each input row's maxima
/// over the window's columns, then each output's maximum over its rows'
/// results. YOLOv8's SPPF 5x5 pools took 0.9 ms a call per window and
/// tap; this is k_h + k_w reads per output instead of k_h * k_w.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
separablePlane(const Window &w, const float *x, int64_t lo, int64_t hi,
               float *rowMax, float *y) {
  for (int64_t r = 0; r < w.in[1]; ++r)
    rowMaxima(w, x + r * w.in[2], lo, hi, rowMax + r * w.out[2]);
  columnMaxima(w, rowMax, y);
}

/// The padded plane's height and width, when a stride-1, undilated 2-D
/// window fits it exactly (else 0): paddedPlane computes those.
int64_t paddedPlaneSize(const Window &w, int64_t *hp, int64_t *wp) {
  *hp = w.in[1] + w.pad[1] + w.padEnd[1];
  *wp = w.in[2] + w.pad[2] + w.padEnd[2];
  for (int d = 1; d < kSpatial; ++d)
    if (w.stride[d] != 1 || w.dil[d] != 1)
      return 0;
  if (w.out[1] != *hp - w.k[1] + 1 || w.out[2] != *wp - w.k[2] + 1)
    return 0;
  return *hp * *wp;
}

/// A stride-1 window as two flat passes over the plane padded with -inf
/// (neutral for the maximum): each position's maximum over the next k_w
/// values, then over k_h rows of those; the columns past the output's
/// mix rows and are dropped. Every loop runs over the whole plane, so it
/// vectorises even on YOLOv8's 10 x 10 SPPF maps, where the per-row
/// passes above spent 1.2 us a plane on loop set-up and edge taps.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
paddedPlane(const Window &w, int64_t hp, int64_t wp, const float *x,
            float *padded, float *rowMax, float *y) {
  const int64_t kh = w.k[1], kw = w.k[2], n = hp * wp;
  std::fill(padded, padded + n + kw - 1, -INFINITY);
  for (int64_t r = 0; r < w.in[1]; ++r)
    std::copy_n(x + r * w.in[2], w.in[2],
                padded + (r + w.pad[1]) * wp + w.pad[2]);
  std::copy_n(padded, n, rowMax);
  for (int64_t e = 1; e < kw; ++e)
    for (int64_t i = 0; i < n; ++i)
      rowMax[i] = maxOrNan(rowMax[i], padded[i + e]);
  // Rows [0, out_h) of window maxima, into `padded` (no longer read).
  const int64_t m = w.out[1] * wp;
  std::copy_n(rowMax, m, padded);
  for (int64_t b = 1; b < kh; ++b)
    for (int64_t i = 0; i < m; ++i)
      padded[i] = maxOrNan(padded[i], rowMax[i + b * wp]);
  for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
    std::copy_n(padded + o1 * wp, w.out[2], y + o1 * w.out[2]);
}

/// An unpadded, undilated 2-D window over a narrow map (openWakeWord's 2x2
/// pools of 4 to 16 columns): each output reads its taps directly. The
/// vectorised row passes spent more on loop set-up than on these rows.
/// `v > acc ? v : acc` is one maxss; maxOrNan's NaN test, scalar, became
/// branches that random data mispredicted (14 ns an output), so a window
/// holding a NaN or an infinity (probe) is redone with it.
void directPlane(const Window &w, const float *x, float *y) {
  const int64_t inCols = w.in[2], kh = w.k[1], kw = w.k[2];
  for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
    for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
      const float *base = x + o1 * w.stride[1] * inCols + o2 * w.stride[2];
      float acc = -INFINITY, probe = 0.0f;
      for (int64_t b = 0; b < kh; ++b)
        for (int64_t e = 0; e < kw; ++e) {
          const float v = base[b * inCols + e];
          acc = v > acc ? v : acc;
          probe += v * 0.0f;
        }
      if (probe != probe) {
        acc = -INFINITY;
        for (int64_t b = 0; b < kh; ++b)
          for (int64_t e = 0; e < kw; ++e)
            acc = maxOrNan(acc, base[b * inCols + e]);
      }
      *y++ = acc;
    }
}

/// Output columns below which an unpadded pool reads its windows directly.
constexpr int64_t kNarrowPool = 16;

/// Both take the first NaN of a window in row-major order.
void planarMaxPool(KernelContext &ctx, const Window &w, int64_t planes,
                   const float *src, float *dst) {
  // Columns whose window lies inside the row read it without bounds
  // checks (every column of an unpadded pool).
  int64_t lo = 0, hi = w.out[2];
  while (lo < hi && tapSource(w, 2, lo, 0) < 0)
    ++lo;
  while (hi > lo && tapSource(w, 2, hi - 1, w.k[2] - 1) < 0)
    --hi;
  // Every window inside the input: no pads, and no window that ceil_mode
  // lets run past the end.
  bool direct = w.out[2] < kNarrowPool;
  for (int d = 1; d < kSpatial; ++d)
    direct &= w.pad[d] == 0 && w.padEnd[d] == 0 && w.dil[d] == 1 &&
              (w.out[d] - 1) * w.stride[d] + w.k[d] <= w.in[d];
  int64_t hp = 0, wp = 0;
  const int64_t paddedSize = direct ? 0 : paddedPlaneSize(w, &hp, &wp);
  ctx.parallelFor(planes, 1, [&](int64_t pb, int64_t pe) {
    std::vector<float> rowMax(
        direct ? 0 : size_t(std::max(w.in[1] * w.out[2], paddedSize)));
    std::vector<float> padded(paddedSize ? size_t(paddedSize + w.k[2]) : 0);
    for (int64_t p = pb; p < pe; ++p)
      if (paddedSize)
        paddedPlane(w, hp, wp, src + p * w.inSize(), padded.data(),
                    rowMax.data(), dst + p * w.outSize());
      else if (direct)
        directPlane(w, src + p * w.inSize(), dst + p * w.outSize());
      else
        separablePlane(w, src + p * w.inSize(), lo, hi, rowMax.data(),
                       dst + p * w.outSize());
  });
}

Status poolKernel(KernelContext &ctx, bool isMax) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  std::vector<int64_t> kernel;
  int64_t ceilMode, includePad;
  if (Status s = ctx.attrInts("kernel_shape", &kernel); !s)
    return s;
  if (Status s = ctx.attrInt("ceil_mode", &ceilMode, 0); !s)
    return s;
  if (Status s = ctx.attrInt("count_include_pad", &includePad, 0); !s)
    return s;
  Window w;
  if (Status s = planWindow(ctx, x.shape, kernel, ceilMode != 0, &w); !s)
    return s;
  // max_pool's `select` 1 (2) writes the argmax as a flat input index (i64)
  // with the spatial dims in row-major (column-major) order.
  int64_t select = 0;
  if (isMax)
    if (Status s = ctx.attrInt("select", &select, 0); !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {select ? DType::I64 : DType::F32});
      !s)
    return s;
  if (Status s = ctx.setOutputShape(
          0, outputShape(x.shape[0], x.shape[1], kernel.size(), w));
      !s)
    return s;
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t inSize = w.inSize(), outSize = w.outSize();
  const float *src = x.as<float>();
  void *dst = ctx.output(0).data;
  if (isMax && !select && w.in[0] == 1 && w.k[0] == 1 && w.out[0] == 1) {
    planarMaxPool(ctx, w, planes, src, static_cast<float *>(dst));
    return Status::ok();
  }
  ctx.parallelFor(planes, 1, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p)
      for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
            float acc = isMax ? -INFINITY : 0.0f;
            int64_t count = 0, arg = -1;
            for (int64_t a = 0; a < w.k[0]; ++a) {
              int64_t i0 = tapSource(w, 0, o0, a);
              for (int64_t b = 0; b < w.k[1] && i0 >= 0; ++b) {
                int64_t i1 = tapSource(w, 1, o1, b);
                for (int64_t e = 0; e < w.k[2] && i1 >= 0; ++e) {
                  int64_t i2 = tapSource(w, 2, o2, e);
                  if (i2 < 0)
                    continue;
                  int64_t at = (i0 * w.in[1] + i1) * w.in[2] + i2;
                  float v = src[p * inSize + at];
                  if (!isMax)
                    acc += v;
                  else if (arg < 0 || v > acc ||
                           (std::isnan(v) && !std::isnan(acc)))
                    acc = v, arg = at;
                  ++count;
                }
              }
            }
            int64_t o = p * outSize + (o0 * w.out[1] + o1) * w.out[2] + o2;
            if (select) {
              int64_t at = std::max<int64_t>(arg, 0);
              if (select == 2) { // column-major spatial order
                int64_t i2 = at % w.in[2], i1 = at / w.in[2] % w.in[1],
                        i0 = at / (w.in[2] * w.in[1]);
                at = (i2 * w.in[1] + i1) * w.in[0] + i0;
              }
              static_cast<int64_t *>(dst)[o] = p * inSize + at;
              continue;
            }
            if (!isMax) {
              if (includePad) {
                // The taps inside the padded input, as onnxruntime and the
                // ONNX reference count them (ceil_mode windows may overhang).
                count = 1;
                int64_t oi[kSpatial] = {o0, o1, o2};
                for (int d = 0; d < kSpatial; ++d) {
                  int64_t first = oi[d] * w.stride[d] - w.pad[d], taps = 0;
                  for (int64_t t = 0; t < w.k[d]; ++t)
                    taps += first + t * w.dil[d] < w.in[d] + w.padEnd[d];
                  count *= taps;
                }
              }
              acc = count ? acc / float(count) : 0.0f;
            }
            static_cast<float *>(dst)[o] = acc;
          }
  });
  return Status::ok();
}

Status maxPoolKernel(KernelContext &ctx) { return poolKernel(ctx, true); }
Status averagePoolKernel(KernelContext &ctx) { return poolKernel(ctx, false); }

Status globalAveragePoolKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (x.shape.size() < 3)
    return ctx.error("expects rank >= 3");
  shape::Shape out = x.shape;
  std::fill(out.begin() + 2, out.end(), 1);
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t len = dimProduct(x.shape, 2, x.shape.size());
  for (int64_t p = 0; p < planes; ++p)
    ctx.output(0).as<float>()[p] =
        len ? float(sumF32(x.as<float>() + p * len, len) / double(len)) : 0.f;
  return Status::ok();
}

} // namespace

void addPoolKernels(std::vector<KernelImpl> &table) {
  table.push_back({"max_pool", maxPoolKernel});
  table.push_back({"average_pool", averagePoolKernel});
  table.push_back({"global_average_pool", globalAveragePoolKernel});
}

} // namespace ingot::cpu
