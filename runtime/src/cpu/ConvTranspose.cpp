//===- ConvTranspose.cpp - conv_transpose (sgemm + col2im) ----------------===//
//
// The adjoint of conv: per image and group, one sgemm turns the input
// [C/g, in positions] into every tap's contribution [M/g · taps, in
// positions] (the weight [C, M/g, k…] read transposed), and col2im adds
// each contribution to the output position it lands on,
// o = i · stride − pad_begin + t · dilation. Unlike zero-upsampling the
// input and running a conv, no multiply is spent on inserted zeros. Each
// output channel sums its contributions in (tap, input position) order,
// then adds the bias; channels are independent tasks.
//
//===----------------------------------------------------------------------===//
#include "cpu/Gemm.h"
#include "cpu/TensorKernels.h"

#include <algorithm>

namespace ingot::cpu {
namespace {

/// Up to three spatial dims, 1-D and 2-D as 3-D with unit leading dims.
struct Geometry {
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
};

Status planGeometry(const KernelContext &ctx, const shape::Shape &x,
                    const shape::Shape &w, Geometry *g) {
  const size_t nd = x.size() - 2;
  std::vector<int64_t> strides, pads, dil, extra;
  if (Status s = ctx.attrInts("strides", &strides, std::vector<int64_t>(nd, 1));
      !s)
    return s;
  if (Status s = ctx.attrInts("pads", &pads, std::vector<int64_t>(2 * nd, 0));
      !s)
    return s;
  if (Status s = ctx.attrInts("dilations", &dil, std::vector<int64_t>(nd, 1));
      !s)
    return s;
  if (Status s =
          ctx.attrInts("output_padding", &extra, std::vector<int64_t>(nd, 0));
      !s)
    return s;
  if (strides.size() != nd || dil.size() != nd || extra.size() != nd ||
      pads.size() != 2 * nd)
    return ctx.error("strides/dilations/output_padding/pads do not match the "
                     "spatial rank");
  std::vector<int64_t> target;
  std::string autoPad;
  if (Status s = ctx.attrInts("output_shape", &target, std::vector<int64_t>{});
      !s)
    return s;
  if (Status s = ctx.attrStr("auto_pad", &autoPad, "NOTSET"); !s)
    return s;
  const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!target.empty() && target.size() != nd)
    return ctx.error("output_shape needs one entry per spatial dim");
  for (size_t i = 0; i < nd; ++i) {
    const size_t j = i + 3 - nd;
    g->in[j] = x[i + 2], g->k[j] = w[i + 2];
    g->stride[j] = strides[i], g->dil[j] = dil[i], g->pad[j] = pads[i];
    if (g->k[j] < 1 || strides[i] < 1 || dil[i] < 1 || extra[i] < 0)
      return ctx.error("kernel, strides and dilations must be positive");
    const int64_t natural =
        strides[i] * (x[i + 2] - 1) + extra[i] + dil[i] * (g->k[j] - 1) + 1;
    g->out[j] = natural - pads[i] - pads[i + nd];
    if (same || !target.empty()) {
      // The pads are derived, as onnxruntime does: the padding that cuts
      // the natural output to the target, half at the begin, the odd one
      // at the end for SAME_UPPER and at the begin otherwise. A target
      // larger than the natural output takes no padding: an output_shape
      // is then zero-filled at the end, a SAME_* output stays natural.
      g->out[j] =
          target.empty() ? std::min(natural, x[i + 2] * strides[i]) : target[i];
      const int64_t total = std::max<int64_t>(0, natural - g->out[j]);
      g->pad[j] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    if (x[i + 2] < 1 || g->out[j] < 1)
      return ctx.error("output dim " + std::to_string(i + 2) + " would be " +
                       std::to_string(g->out[j]));
  }
  return Status::ok();
}

/// Adds tap t's contributions `col` (one per input position) into the
/// output channel y.
void scatterTap(const Geometry &g, int64_t t, const float *col, float *y) {
  const int64_t t0 = t / (g.k[1] * g.k[2]), t1 = t / g.k[2] % g.k[1],
                t2 = t % g.k[2];
  for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
    const int64_t o0 = i0 * g.stride[0] - g.pad[0] + t0 * g.dil[0];
    if (o0 < 0 || o0 >= g.out[0])
      continue;
    for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
      const int64_t o1 = i1 * g.stride[1] - g.pad[1] + t1 * g.dil[1];
      if (o1 < 0 || o1 >= g.out[1])
        continue;
      const float *src = col + (i0 * g.in[1] + i1) * g.in[2];
      float *dst = y + (o0 * g.out[1] + o1) * g.out[2];
      for (int64_t i2 = 0; i2 < g.in[2]; ++i2) {
        const int64_t o2 = i2 * g.stride[2] - g.pad[2] + t2 * g.dil[2];
        if (o2 >= 0 && o2 < g.out[2])
          dst[o2] += src[i2];
      }
    }
  }
}

Status convTransposeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 3, 1); !s)
    return s;
  if (Status s = ctx.expectInputsDType({DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0), &wt = ctx.input(1);
  int64_t group;
  if (Status s = ctx.attrInt("group", &group, 1); !s)
    return s;
  if (x.shape.size() < 3 || x.shape.size() > 5 ||
      wt.shape.size() != x.shape.size())
    return ctx.error("expects [N, C, d1 (, d2 (, d3))] input and a weight of "
                     "its rank");
  const int64_t n = x.shape[0], c = x.shape[1];
  if (group < 1 || wt.shape[0] != c || c % group)
    return ctx.error("channels " + std::to_string(c) + " and weight " +
                     shape::toString(wt.shape) + " do not fit group " +
                     std::to_string(group));
  Geometry g;
  if (Status s = planGeometry(ctx, x.shape, wt.shape, &g); !s)
    return s;
  const int64_t cg = c / group, mg = wt.shape[1], m = mg * group;
  const bool hasBias = ctx.hasInput(2);
  if (hasBias && ctx.input(2).numElements() != m)
    return ctx.error("bias must have M = " + std::to_string(m) + " elements");
  shape::Shape outShape = {n, m};
  for (size_t i = 3 - (x.shape.size() - 2); i < 3; ++i)
    outShape.push_back(g.out[i]);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  const int64_t taps = g.taps(), inSize = g.inSize(), outSize = g.outSize();
  std::vector<float> cols(size_t(mg * taps * inSize));
  float *y = ctx.output(0).as<float>();
  const float *bias = hasBias ? ctx.input(2).as<float>() : nullptr;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < group; ++gi) {
      GemmArgs args;
      args.m = mg * taps, args.n = inSize, args.k = cg;
      args.a = wt.as<float>() + gi * cg * mg * taps, args.lda = mg * taps;
      args.transA = true;
      args.b = x.as<float>() + (b * c + gi * cg) * inSize, args.ldb = inSize;
      args.c = cols.data(), args.ldc = inSize;
      sgemm(args, ctx.pool());
      float *yg = y + (b * m + gi * mg) * outSize;
      ctx.parallelFor(mg, 1, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          float *yo = yg + o * outSize;
          std::fill(yo, yo + outSize, 0.0f);
          for (int64_t t = 0; t < taps; ++t)
            scatterTap(g, t, cols.data() + (o * taps + t) * inSize, yo);
          if (bias)
            for (int64_t p = 0; p < outSize; ++p)
              yo[p] += bias[gi * mg + o];
        }
      });
    }
  return Status::ok();
}

} // namespace

void addConvTransposeKernels(std::vector<KernelImpl> &table) {
  table.push_back({"conv_transpose", convTransposeKernel});
}

} // namespace ingot::cpu
