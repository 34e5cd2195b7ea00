//===- LlmActivation.cpp - silu_mul and gelu ------------------------------===//
//
// Both run over blocks of kBlock elements: a block's inputs are read into a
// stack buffer (through the vectorised sigmoid of MathF32) before the same
// indices of the output are written, so an output that coincides with an
// input is fine. Any other overlap is detached first.
//
// The tanh form of gelu is computed as x·sigmoid(2u), u = √(2/π)(x +
// 0.044715x³), which equals 0.5x(1 + tanh u) without the cancellation of
// 1 + tanh u for negative u. The exact form is 0.5x·erfc(−x/√2) for the
// same reason.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"

#include <cmath>

namespace ingot::cpu {
namespace {

constexpr int64_t kBlock = 1024;
constexpr int64_t kGrainBlocks = 8; // 8K elements per parallel chunk

int64_t numBlocks(int64_t n) { return (n + kBlock - 1) / kBlock; }

Status siluMulKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &gate = ctx.input(0), &up = ctx.input(1);
  if (gate.shape != up.shape)
    return ctx.error("gate " + shape::toString(gate.shape) + " and up " +
                     shape::toString(up.shape) + " must have the same shape");
  if (Status s = ctx.setOutputShape(0, gate.shape); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  const int64_t n = gate.numElements();
  std::vector<uint8_t> sg, su;
  const auto *g = static_cast<const float *>(
      detachIfAliased(gate, o.data, n * 4, o.shape, o.dtype, sg));
  const auto *u = static_cast<const float *>(
      detachIfAliased(up, o.data, n * 4, o.shape, o.dtype, su));
  float *y = o.as<float>();
  ctx.parallelFor(numBlocks(n), kGrainBlocks, [&](int64_t b, int64_t e) {
    float sig[kBlock];
    for (int64_t blk = b; blk < e; ++blk) {
      const int64_t i0 = blk * kBlock, len = std::min(kBlock, n - i0);
      sigmoidF32(g + i0, sig, len);
      for (int64_t i = 0; i < len; ++i)
        y[i0 + i] = g[i0 + i] * sig[i] * u[i0 + i];
    }
  });
  return Status::ok();
}

Status geluKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  std::string approx;
  if (Status s = ctx.attrStr("approximate", &approx, std::string("none")); !s)
    return s;
  if (approx != "none" && approx != "tanh")
    return ctx.error("approximate must be \"none\" or \"tanh\", got \"" +
                     approx + "\"");
  const KernelInput &xin = ctx.input(0);
  if (Status s = ctx.setOutputShape(0, xin.shape); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  const int64_t n = xin.numElements();
  std::vector<uint8_t> scratch;
  const auto *x = static_cast<const float *>(
      detachIfAliased(xin, o.data, n * 4, o.shape, o.dtype, scratch));
  float *y = o.as<float>();
  const bool useTanh = approx == "tanh";
  ctx.parallelFor(numBlocks(n), kGrainBlocks, [&](int64_t b, int64_t e) {
    float t[kBlock];
    for (int64_t blk = b; blk < e; ++blk) {
      const int64_t i0 = blk * kBlock, len = std::min(kBlock, n - i0);
      const float *xb = x + i0;
      float *yb = y + i0;
      if (useTanh) {
        // 2·√(2/π) and 2·√(2/π)·0.044715.
        constexpr float c1 = 1.5957691216057308f, c3 = 0.0713548162726f;
        for (int64_t i = 0; i < len; ++i)
          t[i] = xb[i] * (c1 + c3 * xb[i] * xb[i]);
        sigmoidF32(t, t, len);
        for (int64_t i = 0; i < len; ++i)
          yb[i] = xb[i] * t[i];
      } else {
        constexpr float kInvSqrt2 = 0.70710678118654752f;
        for (int64_t i = 0; i < len; ++i)
          yb[i] = 0.5f * xb[i] * std::erfc(-xb[i] * kInvSqrt2);
      }
    }
  });
  return Status::ok();
}

} // namespace

void addLlmActivationKernels(std::vector<KernelInfo> &table) {
  table.push_back({"silu_mul", siluMulKernel, true});
  table.push_back({"gelu", geluKernel, true});
}

} // namespace ingot::cpu
