//===- LlmNorm.cpp - rms_norm and add_rms_norm ----------------------------===//
//
// y = x / sqrt(mean(x²) + eps) · weight over the last dim. The sum of
// squares goes through the blocked f32/double reduction of KernelUtil, so
// it keeps f32 accuracy for any row length. Each row is read completely
// before any of it is written, which makes the kernel safe in place even
// though the contract does not ask for it.
//
// add_rms_norm (the pre-norm residual stream) writes sum = a + b and
// rms_norm(sum) in one pass: row by row, the row's sum is stored first and
// normalised from the stored values by the same rmsNormRow as rms_norm, so
// y is bitwise what `add` then `rms_norm` give. The memory planner may put
// sum over a and y over b (or the other way round): a row's inputs are
// consumed before its outputs are written, and rows are independent.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/Linear.h"
#include "cpu/RowAliasing.h"

#include <cmath>

namespace ingot::cpu {
namespace {

/// One row of rms_norm; x may equal y (the row is reduced before it is
/// written). Shared by rms_norm and add_rms_norm so that they agree bitwise.
void rmsNormRow(const float *x, float *y, int64_t d, const float *weight,
                double eps) {
  const double ms = sumSquaredDeviationF32(x, d, 0.0f) / double(d);
  const float inv = float(1.0 / std::sqrt(ms + eps));
  for (int64_t i = 0; i < d; ++i)
    y[i] = x[i] * inv * weight[i];
}

Status rmsNormKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectInputDType(1, {DType::F32, DType::F16, DType::BF16});
      !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  double eps;
  if (Status s = ctx.attrFloat("epsilon", &eps, 1e-6); !s)
    return s;
  const KernelInput &x = ctx.input(0), &w = ctx.input(1);
  if (x.shape.empty())
    return ctx.error("input 'x' must have rank >= 1, got a scalar");
  const int64_t d = x.shape.back();
  if (w.shape.size() != 1 || w.shape[0] != d)
    return ctx.error("weight '" + w.name + "' must have shape [" +
                     std::to_string(d) + "] to match x " +
                     shape::toString(x.shape) + ", got " +
                     shape::toString(w.shape));
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  const int64_t rows = dimProduct(x.shape, 0, x.shape.size() - 1);
  if (rows == 0 || d == 0)
    return Status::ok();
  std::vector<float> weight(d);
  bestLinearKernels().widen(w.dtype, w.data, d, weight.data());
  const float *in = x.as<float>();
  float *out = ctx.output(0).as<float>();
  const int64_t grain = std::max<int64_t>(1, 16384 / d);
  ctx.parallelFor(rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      rmsNormRow(in + r * d, out + r * d, d, weight.data(), eps);
  });
  return Status::ok();
}

Status addRmsNormKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 3, 2); !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
      return s;
  if (Status s = ctx.expectInputDType(2, {DType::F32, DType::F16, DType::BF16});
      !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectOutputDType(i, {DType::F32}); !s)
      return s;
  double eps;
  if (Status s = ctx.attrFloat("epsilon", &eps, 1e-6); !s)
    return s;
  const KernelInput &a = ctx.input(0), &b = ctx.input(1), &w = ctx.input(2);
  if (a.shape.empty() || a.shape != b.shape)
    return ctx.error("a " + shape::toString(a.shape) + " and b " +
                     shape::toString(b.shape) +
                     " must have the same shape of rank >= 1");
  const int64_t d = a.shape.back();
  if (w.shape.size() != 1 || w.shape[0] != d)
    return ctx.error("weight '" + w.name + "' must have shape [" +
                     std::to_string(d) + "] to match a " +
                     shape::toString(a.shape) + ", got " +
                     shape::toString(w.shape));
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.setOutputShape(i, a.shape); !s)
      return s;
  const int64_t rows = dimProduct(a.shape, 0, a.shape.size() - 1);
  if (rows == 0 || d == 0)
    return Status::ok();
  std::vector<float> weight(d);
  bestLinearKernels().widen(w.dtype, w.data, d, weight.data());
  std::vector<uint8_t> sa, sb;
  const auto *pa = static_cast<const float *>(detachFromOutputs(ctx, a, sa));
  const auto *pb = static_cast<const float *>(detachFromOutputs(ctx, b, sb));
  float *sum = ctx.output(0).as<float>(), *y = ctx.output(1).as<float>();
  const int64_t grain = std::max<int64_t>(1, 16384 / d);
  ctx.parallelFor(rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float *ar = pa + r * d, *br = pb + r * d;
      float *sr = sum + r * d;
      for (int64_t i = 0; i < d; ++i)
        sr[i] = ar[i] + br[i];
      rmsNormRow(sr, y + r * d, d, weight.data(), eps);
    }
  });
  return Status::ok();
}

} // namespace

void addLlmNormKernels(std::vector<KernelImpl> &table) {
  table.push_back({"rms_norm", rmsNormKernel});
  table.push_back({"add_rms_norm", addRmsNormKernel});
}

} // namespace ingot::cpu
