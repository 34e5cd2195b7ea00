//===- ConvInteger.cpp - conv_integer: 8-bit convolution in int32 ---------===//
//
// ONNX ConvInteger (and QLinearConv, which the importer writes as this
// plus a requantisation): for each image and group the receptive fields
// are unrolled as bytes into a [C/g · taps, positions] matrix, padding
// holding the input's zero point so it contributes 0, and multiplied by
// the group's weights on the exact int8 GEMM of matmul_integer (VNNI or
// int16 pairs). The weights are the GEMM's A, so the result lands in NCHW
// order; a per-output-channel weight zero point z_r, which that GEMM does
// not take per row, is applied after it as - z_r · Σ_k (col[k][p] - x_zp).
//
//===----------------------------------------------------------------------===//
#include "cpu/ConvWindow.h"
#include "cpu/MatMulInteger.h"

#include <algorithm>
#include <cstring>

namespace ingot::cpu {
namespace {

/// Rows [r0, r1) of the byte column matrix [channels · taps, outSize]:
/// each output line's run copied with one strided loop, `pad` where the
/// tap falls outside the input.
void unrollRows(const uint8_t *x, const Window &w, uint8_t pad, int64_t r0,
                int64_t r1, uint8_t *col) {
  const int64_t taps = w.k[0] * w.k[1] * w.k[2], ow = w.out[2];
  const int64_t lines = w.out[0] * w.out[1], s = w.stride[2];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / taps, t = r % taps;
    const int64_t a = t / (w.k[1] * w.k[2]), b = t / w.k[2] % w.k[1],
                  e = t % w.k[2];
    const int64_t shift = e * w.dil[2] - w.pad[2];
    // Output columns [lo, hi) read inside the row along the last dim.
    const int64_t lo = shift >= 0 ? 0 : std::min(ow, (-shift + s - 1) / s);
    const int64_t last = w.in[2] - 1 - shift;
    const int64_t hi = last < 0 ? lo : std::max(lo, std::min(ow, last / s + 1));
    for (int64_t line = 0; line < lines; ++line) {
      uint8_t *dst = col + r * w.outSize() + line * ow;
      const int64_t i0 = tapSource(w, 0, line / w.out[1], a),
                    i1 = tapSource(w, 1, line % w.out[1], b);
      if (i0 < 0 || i1 < 0) {
        std::memset(dst, pad, size_t(ow));
        continue;
      }
      const uint8_t *src = x + c * w.inSize() + (i0 * w.in[1] + i1) * w.in[2];
      std::memset(dst, pad, size_t(lo));
      if (s == 1)
        std::memcpy(dst + lo, src + lo + shift, size_t(hi - lo));
      else
        for (int64_t o = lo; o < hi; ++o)
          dst[o] = src[o * s + shift];
      std::memset(dst + hi, pad, size_t(ow - hi));
    }
  }
}

/// Σ_k (col[k][p] - zero) for every position p.
void columnSums(const uint8_t *col, int64_t kdim, int64_t outSize,
                bool isUnsigned, int32_t zero, std::vector<int32_t> &sums) {
  sums.assign(size_t(outSize), int32_t(-zero * kdim));
  for (int64_t k = 0; k < kdim; ++k) {
    const uint8_t *row = col + k * outSize;
    for (int64_t p = 0; p < outSize; ++p)
      sums[size_t(p)] +=
          isUnsigned ? int32_t(row[p]) : int32_t(static_cast<int8_t>(row[p]));
  }
}

int32_t zeroAt(const KernelInput &zp, int64_t i) {
  const int64_t at = zp.numElements() > 1 ? i : 0;
  return zp.dtype == DType::U8 ? int32_t(zp.as<uint8_t>()[at])
                               : int32_t(zp.as<int8_t>()[at]);
}

struct ZeroPoints {
  int32_t x = 0;
  uint8_t padByte = 0; // x's zero point as stored
  const KernelInput *w = nullptr;
  bool wPerChannel = false;
};

Status readZeroPoints(KernelContext &ctx, int64_t m, ZeroPoints *z) {
  const KernelInput &x = ctx.input(0), &wt = ctx.input(1);
  if (ctx.hasInput(2)) {
    if (Status s = checkZeroPoint(ctx, 2, x.dtype, 0); !s)
      return s;
    z->x = zeroAt(ctx.input(2), 0);
    z->padByte = *ctx.input(2).as<uint8_t>();
  }
  if (ctx.hasInput(3)) {
    if (Status s = checkZeroPoint(ctx, 3, wt.dtype, m); !s)
      return s;
    z->w = &ctx.input(3);
    z->wPerChannel = z->w->numElements() > 1;
    // onnxruntime's quantiser writes per-channel int8 weights with zero
    // points that are all 0: nothing to correct then.
    if (z->wPerChannel) {
      const auto *b = z->w->as<uint8_t>();
      z->wPerChannel = std::any_of(b, b + z->w->numElements(),
                                   [](uint8_t v) { return v != 0; });
      if (!z->wPerChannel)
        z->w = nullptr;
    }
  }
  return Status::ok();
}

/// One image's group: unroll, multiply, correct per-channel zero points.
void groupConvInteger(KernelContext &ctx, const Window &w, const uint8_t *xg,
                      const uint8_t *wg, int64_t cg, int64_t mg, int64_t g,
                      const ZeroPoints &z, std::vector<uint8_t> &col,
                      int32_t *yg) {
  const KernelInput &x = ctx.input(0), &wt = ctx.input(1);
  const int64_t kdim = cg * w.k[0] * w.k[1] * w.k[2], outSize = w.outSize();
  // A 1x1, stride-1, unpadded window reads the input as it is.
  bool direct = outSize == w.inSize();
  for (int d = 0; d < kSpatial; ++d)
    direct &= w.k[d] == 1 && w.stride[d] == 1 && w.pad[d] == 0;
  const uint8_t *cols = xg;
  if (!direct) {
    col.resize(size_t(kdim * outSize));
    ctx.parallelFor(kdim, std::max<int64_t>(1, 65536 / outSize),
                    [&](int64_t r0, int64_t r1) {
                      unrollRows(xg, w, z.padByte, r0, r1, col.data());
                    });
    cols = col.data();
  }
  QGemmArgs q;
  q.rows = mg, q.k = kdim, q.n = outSize;
  q.a = wg, q.aUnsigned = wt.dtype == DType::U8;
  q.aZero = z.w && !z.wPerChannel ? zeroAt(*z.w, 0) : 0;
  q.b = cols, q.bUnsigned = x.dtype == DType::U8;
  const uint8_t bZero = z.padByte;
  q.bZero = &bZero;
  q.c = yg;
  qgemm(q, ctx.pool(), bestQGemmIsa());
  if (!z.wPerChannel)
    return;
  std::vector<int32_t> sums;
  columnSums(cols, kdim, outSize, q.bUnsigned, z.x, sums);
  ctx.parallelFor(mg, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const int32_t zr = zeroAt(*z.w, g * mg + o);
      int32_t *row = yg + o * outSize;
      for (int64_t p = 0; p < outSize; ++p)
        row[p] -= zr * sums[size_t(p)];
    }
  });
}

Status convIntegerKernel(KernelContext &ctx) {
  if (Status s = expectInteger8Operands(ctx); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::I32}); !s)
    return s;
  ConvGeometry geo;
  if (Status s = planConv(ctx, &geo); !s)
    return s;
  ZeroPoints z;
  if (Status s = readZeroPoints(ctx, geo.m, &z); !s)
    return s;
  Window &w = geo.w;
  if (Status s =
          ctx.setOutputShape(0, outputShape(geo.n, geo.m, geo.spatialRank, w));
      !s)
    return s;
  hoistUnitInnerDims(w);
  const int64_t cg = geo.c / geo.group, mg = geo.m / geo.group;
  const int64_t kdim = cg * w.k[0] * w.k[1] * w.k[2], outSize = w.outSize();
  if (outSize == 0 || mg == 0 || geo.n == 0)
    return Status::ok();
  const auto *x = ctx.input(0).as<uint8_t>();
  const auto *wt = ctx.input(1).as<uint8_t>();
  int32_t *y = ctx.output(0).as<int32_t>();
  std::vector<uint8_t> col;
  for (int64_t b = 0; b < geo.n; ++b)
    for (int64_t g = 0; g < geo.group; ++g)
      groupConvInteger(ctx, w, x + (b * geo.c + g * cg) * w.inSize(),
                       wt + g * mg * kdim, cg, mg, g, z, col,
                       y + (b * geo.m + g * mg) * outSize);
  return Status::ok();
}

} // namespace

void addConvIntegerKernels(std::vector<KernelImpl> &table) {
  table.push_back({"conv_integer", convIntegerKernel});
}

} // namespace ingot::cpu
