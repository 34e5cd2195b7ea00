//===- ConvKernels.cpp - conv (im2col + sgemm) and pooling
//-----------------===//
//
// 1-D and 2-D windows run as 3-D ones with unit leading dims. For each
// image and group the receptive fields are unrolled into a
// [C/g · kd · kh · kw, od · oh · ow] matrix (zeros where the window hangs
// over the padding) and multiplied by the group's [M/g, C/g · kd · kh · kw]
// weights with the shared sgemm; a 1x1, stride-1, unpadded convolution
// multiplies the input directly. Pooling walks the same windows.
//
//===----------------------------------------------------------------------===//
#include "cpu/Gemm.h"
#include "cpu/TensorKernels.h"

#include <algorithm>
#include <cmath>

namespace ingot::cpu {
namespace {

/// Up to three spatial dims (D, H, W); 1-D and 2-D windows are 3-D ones
/// with unit leading dims, so one loop nest serves all ranks.
constexpr int kSpatial = 3;

struct Window {
  int64_t in[kSpatial], k[kSpatial], stride[kSpatial], dil[kSpatial],
      pad[kSpatial], padEnd[kSpatial], out[kSpatial];
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
};

/// Reads strides/pads/dilations/auto_pad and computes the output dims;
/// `kernel` holds the window size per spatial dim (1 to 3 of them).
Status planWindow(const KernelContext &ctx, const shape::Shape &x,
                  const std::vector<int64_t> &kernel, bool ceilMode,
                  Window *w) {
  const size_t nd = kernel.size();
  if (x.size() != nd + 2 || nd < 1 || nd > kSpatial)
    return ctx.error("expects [N, C, d1 (, d2 (, d3))] input with one "
                     "kernel dim per spatial dim");
  std::vector<int64_t> strides, pads, dil;
  std::string autoPad;
  if (Status s = ctx.attrInts("strides", &strides, std::vector<int64_t>(nd, 1));
      !s)
    return s;
  if (Status s = ctx.attrInts("pads", &pads, std::vector<int64_t>(2 * nd, 0));
      !s)
    return s;
  if (Status s = ctx.attrInts("dilations", &dil, std::vector<int64_t>(nd, 1));
      !s)
    return s;
  if (Status s = ctx.attrStr("auto_pad", &autoPad, "NOTSET"); !s)
    return s;
  if (strides.size() != nd || dil.size() != nd || pads.size() != 2 * nd)
    return ctx.error("strides/dilations/pads do not match the spatial rank");
  const size_t off = kSpatial - nd;
  for (size_t i = 0; i < kSpatial; ++i) {
    w->in[i] = 1, w->k[i] = 1, w->stride[i] = 1, w->dil[i] = 1, w->pad[i] = 0;
    w->padEnd[i] = 0;
    w->out[i] = 1;
  }
  for (size_t i = 0; i < nd; ++i) {
    size_t j = i + off;
    w->in[j] = x[i + 2];
    w->k[j] = kernel[i];
    w->stride[j] = strides[i];
    w->dil[j] = dil[i];
    w->pad[j] = pads[i];
    w->padEnd[j] = pads[i + nd];
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1)
      return ctx.error("kernel, strides and dilations must be positive");
    w->out[j] = windowOut(x[i + 2], kernel[i], strides[i], dil[i], &w->pad[j],
                          &w->padEnd[j], autoPad, ceilMode);
  }
  return Status::ok();
}

/// Output dims: N, C (or M) and the real spatial dims.
shape::Shape outputShape(int64_t n, int64_t c, size_t nd, const Window &w) {
  shape::Shape out = {n, c};
  for (size_t i = kSpatial - nd; i < kSpatial; ++i)
    out.push_back(w.out[i]);
  return out;
}

/// Source index of output position o at kernel tap t along spatial dim d,
/// or -1 when it falls in the padding.
inline int64_t tapSource(const Window &w, int d, int64_t o, int64_t t) {
  int64_t i = o * w.stride[d] - w.pad[d] + t * w.dil[d];
  return i >= 0 && i < w.in[d] ? i : -1;
}

void im2col(const float *x, int64_t channels, const Window &w, float *col) {
  const int64_t outSize = w.outSize();
  float *row = col;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t a = 0; a < w.k[0]; ++a)
      for (int64_t b = 0; b < w.k[1]; ++b)
        for (int64_t e = 0; e < w.k[2]; ++e, row += outSize) {
          float *dst = row;
          for (int64_t o0 = 0; o0 < w.out[0]; ++o0) {
            int64_t i0 = tapSource(w, 0, o0, a);
            for (int64_t o1 = 0; o1 < w.out[1]; ++o1) {
              int64_t i1 = tapSource(w, 1, o1, b);
              for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
                int64_t i2 = tapSource(w, 2, o2, e);
                *dst++ =
                    i0 < 0 || i1 < 0 || i2 < 0
                        ? 0.0f
                        : x[((c * w.in[0] + i0) * w.in[1] + i1) * w.in[2] + i2];
              }
            }
          }
        }
}

/// Output positions [lo, hi) along spatial dim d whose tap t reads inside
/// the input (the others read padding).
inline void validRange(const Window &w, int d, int64_t t, int64_t *lo,
                       int64_t *hi) {
  const int64_t s = w.stride[d], shift = t * w.dil[d] - w.pad[d];
  // i = o * s + shift must lie in [0, in).
  *lo = shift >= 0 ? 0 : (-shift + s - 1) / s;
  const int64_t last = w.in[d] - 1 - shift;
  *hi = last < 0 ? 0 : std::min(w.out[d], last / s + 1);
  *lo = std::min(*lo, *hi);
}

/// One output channel of a depthwise conv (one input channel per group):
/// each output row sums its taps in (d, h, w) order, then adds the bias.
/// Along the last dim the taps are whole contiguous runs (stride 1), which
/// the compiler vectorises.
void depthwiseChannel(const float *x, const float *k, float bias,
                      const Window &w, float *y) {
  const int64_t rowLen = w.out[2];
  for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < w.out[1]; ++o1) {
      float *row = y + (o0 * w.out[1] + o1) * rowLen;
      std::fill(row, row + rowLen, 0.0f);
      for (int64_t a = 0; a < w.k[0]; ++a) {
        const int64_t i0 = tapSource(w, 0, o0, a);
        for (int64_t b = 0; b < w.k[1] && i0 >= 0; ++b) {
          const int64_t i1 = tapSource(w, 1, o1, b);
          if (i1 < 0)
            continue;
          const float *in = x + (i0 * w.in[1] + i1) * w.in[2];
          for (int64_t e = 0; e < w.k[2]; ++e) {
            const float wv = k[(a * w.k[1] + b) * w.k[2] + e];
            int64_t lo, hi;
            validRange(w, 2, e, &lo, &hi);
            const int64_t shift = e * w.dil[2] - w.pad[2], s = w.stride[2];
            if (s == 1)
              for (int64_t o = lo; o < hi; ++o)
                row[o] += wv * in[o + shift];
            else
              for (int64_t o = lo; o < hi; ++o)
                row[o] += wv * in[o * s + shift];
          }
        }
      }
      for (int64_t o = 0; o < rowLen; ++o)
        row[o] += bias;
    }
}

/// C/g = 1 (depthwise, with any channel multiplier M/g): im2col + a GEMM
/// of one row per channel would run 1-row GEMMs serially; instead each
/// (image, output channel) is one task of direct convolution.
void depthwiseConv(KernelContext &ctx, const Window &w, int64_t n, int64_t c,
                   int64_t m, float *y) {
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
    }
  });
}

Status convKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 3, 1); !s)
    return s;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i))
      if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
        return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0), &wt = ctx.input(1);
  int64_t group;
  if (Status s = ctx.attrInt("group", &group, 1); !s)
    return s;
  if (wt.shape.size() != x.shape.size() || x.shape.size() < 3)
    return ctx.error("weight and input ranks differ");
  const int64_t n = x.shape[0], c = x.shape[1], m = wt.shape[0];
  if (group < 1 || c % group || m % group || wt.shape[1] * group != c)
    return ctx.error("channels " + std::to_string(c) + " and weight " +
                     shape::toString(wt.shape) + " do not fit group " +
                     std::to_string(group));
  Window w;
  std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
  if (Status s = planWindow(ctx, x.shape, kernel, false, &w); !s)
    return s;
  const bool hasBias = ctx.hasInput(2);
  if (hasBias && ctx.input(2).numElements() != m)
    return ctx.error("bias must have M elements");
  if (Status s = ctx.setOutputShape(0, outputShape(n, m, kernel.size(), w)); !s)
    return s;
  const int64_t cg = c / group, mg = m / group;
  if (cg == 1 && group > 1) {
    depthwiseConv(ctx, w, n, c, m, ctx.output(0).as<float>());
    return Status::ok();
  }
  const int64_t kdim = cg * w.k[0] * w.k[1] * w.k[2];
  const int64_t outSize = w.outSize(), inSize = w.inSize();
  bool direct = outSize == inSize;
  for (int d = 0; d < kSpatial; ++d)
    direct &= w.k[d] == 1 && w.stride[d] == 1 && w.pad[d] == 0;
  std::vector<float> col(direct ? 0 : size_t(kdim * outSize));
  float *y = ctx.output(0).as<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < group; ++g) {
      if (outSize == 0 || mg == 0)
        continue;
      const float *xg = x.as<float>() + (b * c + g * cg) * inSize;
      if (!direct)
        im2col(xg, cg, w, col.data());
      GemmArgs args;
      args.m = mg, args.n = outSize, args.k = kdim;
      args.a = wt.as<float>() + g * mg * kdim, args.lda = kdim;
      args.b = direct ? xg : col.data(), args.ldb = outSize;
      args.c = y + (b * m + g * mg) * outSize, args.ldc = outSize;
      sgemm(args, ctx.pool());
      if (hasBias)
        for (int64_t o = 0; o < mg; ++o) {
          float bias = ctx.input(2).as<float>()[g * mg + o];
          for (int64_t p = 0; p < outSize; ++p)
            args.c[o * outSize + p] += bias;
        }
    }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

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

void addConvKernels(std::vector<KernelImpl> &table) {
  table.push_back({"conv", convKernel});
}

void addPoolKernels(std::vector<KernelImpl> &table) {
  table.push_back({"max_pool", maxPoolKernel});
  table.push_back({"average_pool", averagePoolKernel});
  table.push_back({"global_average_pool", globalAveragePoolKernel});
}

} // namespace ingot::cpu
