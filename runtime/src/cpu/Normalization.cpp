//===- Normalization.cpp - softmax and layer_norm -------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"

#include <cmath>
#include <limits>

namespace ingot::cpu {
namespace {

/// Softmax over each contiguous row of `len` values. In-place safe: the row
/// is read for the max before any element is written, then each element is
/// read just before it is overwritten.
void softmaxRow(const float *x, float *y, int64_t len) {
  expF32(x, maxF32(x, len), y, len);
  const float inv = float(1.0 / sumF32(y, len));
  for (int64_t i = 0; i < len; ++i)
    y[i] *= inv;
}

/// Softmax along a strided axis: `inner` interleaved columns of `len` values
/// processed together so the loops run over contiguous memory.
void softmaxColumns(const float *x, float *y, int64_t len, int64_t inner,
                    std::vector<float> &mx, std::vector<double> &sum) {
  mx.assign(inner, -std::numeric_limits<float>::infinity());
  sum.assign(inner, 0.0);
  for (int64_t j = 0; j < len; ++j)
    for (int64_t c = 0; c < inner; ++c)
      mx[c] = std::max(mx[c], x[j * inner + c]);
  for (int64_t j = 0; j < len; ++j) {
    const float *xr = x + j * inner;
    float *yr = y + j * inner;
    for (int64_t c = 0; c < inner; ++c)
      yr[c] = xr[c] - mx[c];
    expF32(yr, 0.0f, yr, inner);
    for (int64_t c = 0; c < inner; ++c)
      sum[c] += yr[c];
  }
  for (int64_t j = 0; j < len; ++j)
    for (int64_t c = 0; c < inner; ++c)
      y[j * inner + c] = float(y[j * inner + c] / sum[c]);
}

Status softmaxKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  int64_t axisAttr, axis;
  if (Status s = ctx.attrInt("axis", &axisAttr, -1); !s)
    return s;
  const int64_t rank = x.shape.size();
  if (rank == 0 || !shape::normalizeAxis(axisAttr, rank, &axis))
    return ctx.error("axis " + std::to_string(axisAttr) +
                     " is out of range for input " + shape::toString(x.shape));
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  std::vector<uint8_t> scratch;
  KernelOutput &o = ctx.output(0);
  auto *in = static_cast<const float *>(
      detachIfAliased(x, o.data, x.bytes(), x.shape, o.dtype, scratch));
  float *out = o.as<float>();
  const int64_t outer = dimProduct(x.shape, 0, axis);
  const int64_t len = x.shape[axis];
  const int64_t inner = dimProduct(x.shape, axis + 1, rank);
  if (len == 0 || outer * inner == 0)
    return Status::ok();
  const int64_t grain = std::max<int64_t>(1, 16384 / (len * inner));
  ctx.parallelFor(outer, grain, [&](int64_t b, int64_t e) {
    std::vector<float> mx;
    std::vector<double> sum;
    for (int64_t r = b; r < e; ++r) {
      const float *xr = in + r * len * inner;
      float *yr = out + r * len * inner;
      if (inner == 1)
        softmaxRow(xr, yr, len);
      else
        softmaxColumns(xr, yr, len, inner, mx, sum);
    }
  });
  return Status::ok();
}

/// scale/bias broadcast to the normalised dims, as n contiguous values.
Status expandParam(const KernelContext &ctx, size_t input,
                   const shape::Shape &normShape, std::vector<float> &storage,
                   const float **out) {
  const KernelInput &p = ctx.input(input);
  shape::Shape b;
  if (!shape::broadcast({normShape, p.shape}, &b, nullptr) || b != normShape)
    return ctx.error("input " + std::to_string(input) + " '" + p.name +
                     "' of shape " + shape::toString(p.shape) +
                     " does not broadcast to the normalised dims " +
                     shape::toString(normShape));
  const int64_t n = shape::numElements(normShape);
  if (p.numElements() == n) {
    *out = p.as<float>();
    return Status::ok();
  }
  storage.resize(n);
  shape::Shape ps = p.shape;
  BroadcastPlan plan;
  makeBroadcastPlan(normShape, {&ps, &normShape}, &plan);
  const float *src = p.as<float>();
  const int last = plan.rank - 1;
  forEachRun(plan, 0, n, [&](const int64_t *off, int64_t cnt) {
    for (int64_t i = 0; i < cnt; ++i)
      storage[off[1] + i] = src[off[0] + i * plan.strides[0][last]];
  });
  *out = storage.data();
  return Status::ok();
}

Status layerNormKernel(KernelContext &ctx) {
  if (ctx.numOutputs() < 1 || ctx.numOutputs() > 3)
    return ctx.error("expects 1 to 3 outputs (Y, Mean, InvStdDev), got " +
                     std::to_string(ctx.numOutputs()));
  KernelContext &c = ctx;
  if (c.numInputs() < 2 || c.numInputs() > 3 || !c.hasInput(0) ||
      !c.hasInput(1))
    return c.error("expects inputs x, scale and optional bias");
  for (size_t i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i))
      if (Status s = c.expectInputDType(i, {DType::F32}); !s)
        return s;
  for (size_t i = 0; i < c.numOutputs(); ++i)
    if (Status s = c.expectOutputDType(i, {DType::F32}); !s)
      return s;
  const KernelInput &x = c.input(0);
  int64_t axisAttr, axis;
  double eps;
  if (Status s = c.attrInt("axis", &axisAttr, -1); !s)
    return s;
  if (Status s = c.attrFloat("epsilon", &eps, 1e-5); !s)
    return s;
  const int64_t rank = x.shape.size();
  if (rank == 0 || !shape::normalizeAxis(axisAttr, rank, &axis))
    return c.error("axis " + std::to_string(axisAttr) +
                   " is out of range for input " + shape::toString(x.shape));
  const shape::Shape normShape(x.shape.begin() + axis, x.shape.end());
  std::vector<float> scaleStore, biasStore;
  const float *scale = nullptr, *bias = nullptr;
  if (Status s = expandParam(c, 1, normShape, scaleStore, &scale); !s)
    return s;
  if (c.hasInput(2))
    if (Status s = expandParam(c, 2, normShape, biasStore, &bias); !s)
      return s;
  if (Status s = c.setOutputShape(0, x.shape); !s)
    return s;
  shape::Shape statShape(x.shape.begin(), x.shape.begin() + axis);
  statShape.resize(rank, 1);
  for (size_t i = 1; i < c.numOutputs(); ++i)
    if (Status s = c.setOutputShape(i, statShape); !s)
      return s;
  const int64_t rows = dimProduct(x.shape, 0, axis);
  const int64_t n = shape::numElements(normShape);
  const float *in = x.as<float>();
  float *out = c.output(0).as<float>();
  float *meanOut = c.numOutputs() > 1 ? c.output(1).as<float>() : nullptr;
  float *invOut = c.numOutputs() > 2 ? c.output(2).as<float>() : nullptr;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
  c.parallelFor(rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float *xr = in + r * n;
      float *yr = out + r * n;
      // Two passes: the variance stays accurate when |mean| >> std.
      const double mean = n ? sumF32(xr, n) / double(n) : 0.0;
      const double sq = sumSquaredDeviationF32(xr, n, float(mean));
      const double inv = 1.0 / std::sqrt((n ? sq / n : 0.0) + eps);
      const float fm = float(mean), fi = float(inv);
      for (int64_t i = 0; i < n; ++i) {
        float v = (xr[i] - fm) * fi * scale[i];
        yr[i] = bias ? v + bias[i] : v;
      }
      if (meanOut)
        meanOut[r] = fm;
      if (invOut)
        invOut[r] = fi;
    }
  });
  return Status::ok();
}

} // namespace

void addNormalizationKernels(std::vector<KernelInfo> &table) {
  table.push_back({"softmax", softmaxKernel, true});
  table.push_back({"layer_norm", layerNormKernel, false});
}

} // namespace ingot::cpu
