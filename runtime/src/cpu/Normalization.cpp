//===- Normalization.cpp - softmax, layer_norm and add_layer_norm ---------===//
//
// add_layer_norm writes sum = a + b and layer_norm(sum) over the last dim in
// one pass, row by row: the row's sum is stored first and normalised from
// the stored values by the same layerNormRow as layer_norm, so y is bitwise
// what `add` then `layer_norm` (axis -1) give. Outputs may coincide with the
// inputs (sum over a, y over b): a row's inputs are consumed before its
// outputs are written, and rows are independent.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"
#include "cpu/RowAliasing.h"

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

/// Softmax along a strided axis: `count` interleaved columns (`stride`
/// apart from one value to the next) of `len` values processed together so
/// the loops run over contiguous memory. Each column's arithmetic is its
/// own, so how the columns are grouped does not change any bit. Cloned per
/// ISA (the same operations, none contractible): on the baseline's two
/// doubles per division the last loop was half of YOLOv8's DFL softmax.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
softmaxColumns(const float *x, float *y, int64_t len, int64_t stride,
               int64_t count, std::vector<float> &mx,
               std::vector<double> &sum) {
  mx.assign(count, -std::numeric_limits<float>::infinity());
  sum.assign(count, 0.0);
  for (int64_t j = 0; j < len; ++j)
    for (int64_t c = 0; c < count; ++c)
      mx[c] = std::max(mx[c], x[j * stride + c]);
  for (int64_t j = 0; j < len; ++j) {
    const float *xr = x + j * stride;
    float *yr = y + j * stride;
    for (int64_t c = 0; c < count; ++c)
      yr[c] = xr[c] - mx[c];
    expF32(yr, 0.0f, yr, count);
    for (int64_t c = 0; c < count; ++c)
      sum[c] += yr[c];
  }
  for (int64_t j = 0; j < len; ++j)
    for (int64_t c = 0; c < count; ++c)
      y[j * stride + c] = float(y[j * stride + c] / sum[c]);
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
  // Few rows along a strided axis (YOLOv8's DFL softmax, [1, 16, 4, 2100]
  // over axis 1, ran on one thread): the columns are split too.
  const int64_t parts =
      inner >= 1024 && outer < 16 ? std::min<int64_t>(inner / 512, 16) : 1;
  const int64_t width = (inner + parts - 1) / parts;
  const int64_t grain = std::max<int64_t>(1, 16384 / (len * width));
  ctx.parallelFor(outer * parts, grain, [&](int64_t b, int64_t e) {
    std::vector<float> mx;
    std::vector<double> sum;
    for (int64_t t = b; t < e; ++t) {
      const int64_t r = t / parts, c0 = t % parts * width;
      const float *xr = in + r * len * inner;
      float *yr = out + r * len * inner;
      if (inner == 1)
        softmaxRow(xr, yr, len);
      else
        softmaxColumns(xr + c0, yr + c0, len, inner,
                       std::min(width, inner - c0), mx, sum);
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

/// One row of layer_norm over n values (x may equal y: the row is reduced
/// before it is written); `mean`/`inv` receive the statistics when given.
/// Shared by layer_norm and add_layer_norm so that they agree bitwise.
/// y = (x - mean)·inv·scale (+ bias), each operation rounded in turn: no
/// contraction, so every ISA's clone gives the same bits (the baseline's 4
/// lanes made it most of BERT's add_layer_norm). y may be x.
__attribute__((target_clones("avx512f", "avx2", "default"),
               optimize("fp-contract=off"))) void
normalizeRow(const float *x, float *y, int64_t n, float mean, float inv,
             const float *scale, const float *bias) {
  if (bias)
    for (int64_t i = 0; i < n; ++i)
      y[i] = (x[i] - mean) * inv * scale[i] + bias[i];
  else
    for (int64_t i = 0; i < n; ++i)
      y[i] = (x[i] - mean) * inv * scale[i];
}

/// s = a + b over one row, vectorised per ISA (exact either way).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
addRow(const float *a, const float *b, float *s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    s[i] = a[i] + b[i];
}

void layerNormRow(const float *x, float *y, int64_t n, const float *scale,
                  const float *bias, double eps, float *mean, float *inv) {
  // Two passes: the variance stays accurate when |mean| >> std.
  const double m = n ? sumF32(x, n) / double(n) : 0.0;
  const double sq = sumSquaredDeviationF32(x, n, float(m));
  const double is = 1.0 / std::sqrt((n ? sq / n : 0.0) + eps);
  const float fm = float(m), fi = float(is);
  normalizeRow(x, y, n, fm, fi, scale, bias);
  if (mean)
    *mean = fm;
  if (inv)
    *inv = fi;
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
    for (int64_t r = b; r < e; ++r)
      layerNormRow(in + r * n, out + r * n, n, scale, bias, eps,
                   meanOut ? meanOut + r : nullptr,
                   invOut ? invOut + r : nullptr);
  });
  return Status::ok();
}

Status addLayerNormKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 4, 2); !s)
    return s;
  if (Status s = ctx.expectInputsDType({DType::F32}); !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectOutputDType(i, {DType::F32}); !s)
      return s;
  double eps;
  if (Status s = ctx.attrFloat("epsilon", &eps, 1e-5); !s)
    return s;
  const KernelInput &a = ctx.input(0), &b = ctx.input(1);
  if (a.shape.empty() || a.shape != b.shape)
    return ctx.error("a " + shape::toString(a.shape) + " and b " +
                     shape::toString(b.shape) +
                     " must have the same shape of rank >= 1");
  const int64_t n = a.shape.back();
  const shape::Shape normShape{n};
  std::vector<float> scaleStore, biasStore;
  const float *scale = nullptr, *bias = nullptr;
  if (Status s = expandParam(ctx, 2, normShape, scaleStore, &scale); !s)
    return s;
  if (ctx.hasInput(3))
    if (Status s = expandParam(ctx, 3, normShape, biasStore, &bias); !s)
      return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.setOutputShape(i, a.shape); !s)
      return s;
  const int64_t rows = dimProduct(a.shape, 0, a.shape.size() - 1);
  if (rows == 0 || n == 0)
    return Status::ok();
  std::vector<uint8_t> sa, sb;
  const float *in[2] = {
      static_cast<const float *>(detachFromOutputs(ctx, a, sa)),
      static_cast<const float *>(detachFromOutputs(ctx, b, sb))};
  float *sum = ctx.output(0).as<float>(), *y = ctx.output(1).as<float>();
  const int64_t grain = std::max<int64_t>(1, 16384 / n);
  ctx.parallelFor(rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float *ar = in[0] + r * n, *br = in[1] + r * n;
      float *sr = sum + r * n;
      addRow(ar, br, sr, n);
      layerNormRow(sr, y + r * n, n, scale, bias, eps, nullptr, nullptr);
    }
  });
  return Status::ok();
}

} // namespace

void addNormalizationKernels(std::vector<KernelImpl> &table) {
  table.push_back({"softmax", softmaxKernel});
  table.push_back({"layer_norm", layerNormKernel});
  table.push_back({"add_layer_norm", addLayerNormKernel});
}

} // namespace ingot::cpu
