//===- LlmNorm.cpp - rms_norm ---------------------------------------------===//
//
// y = x / sqrt(mean(x²) + eps) · weight over the last dim. The sum of
// squares goes through the blocked f32/double reduction of KernelUtil, so
// it keeps f32 accuracy for any row length. Each row is read completely
// before any of it is written, which makes the kernel safe in place even
// though the contract does not ask for it.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/Linear.h"

#include <cmath>

namespace ingot::cpu {
namespace {

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
    for (int64_t r = b; r < e; ++r) {
      const float *xr = in + r * d;
      float *yr = out + r * d;
      const double ms = sumSquaredDeviationF32(xr, d, 0.0f) / double(d);
      const float inv = float(1.0 / std::sqrt(ms + eps));
      for (int64_t i = 0; i < d; ++i)
        yr[i] = xr[i] * inv * weight[i];
    }
  });
  return Status::ok();
}

} // namespace

void addLlmNormKernels(std::vector<KernelInfo> &table) {
  table.push_back({"rms_norm", rmsNormKernel, false});
}

} // namespace ingot::cpu
