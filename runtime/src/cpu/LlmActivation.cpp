//===- LlmActivation.cpp - silu_mul and gelu ------------------------------===//
//
// Both run over blocks of kBlock elements: a block's inputs are read into a
// stack buffer (through the vectorised sigmoid of MathF32) before the same
// indices of the output are written, so an output that coincides with an
// input is fine. Any other overlap is detached first.
//
// silu_mul's one-input form reads a merged gate/up projection [..., 2F]
// (gate first) and writes [..., F] through the same block function as the
// two-input form, so the two agree bitwise. Its output may start where the
// input does (the planner reuses the dying input's memory); siluMulPacked
// then runs the rows in waves that never overwrite unread input.
//
// The tanh form of gelu is computed as x·sigmoid(2u), u = √(2/π)(x +
// 0.044715x³), which equals 0.5x(1 + tanh u) without the cancellation of
// 1 + tanh u for negative u. The exact form is 0.5x·erfc(−x/√2) for the
// same reason.
//
//===----------------------------------------------------------------------===//

#include "cpu/Activation.h"
#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"

#include <cmath>

namespace ingot::cpu {
namespace {

constexpr int64_t kBlock = 1024;
constexpr int64_t kGrainBlocks = 8; // 8K elements per parallel chunk

int64_t numBlocks(int64_t n) { return (n + kBlock - 1) / kBlock; }

/// y[i] = g[i]·sigmoid(g[i])·u[i] for i < len <= kBlock; y may equal g or u.
void siluMulBlock(const float *g, const float *u, float *y, int64_t len) {
  float gate[kBlock];
  siluF32(g, gate, len); // g·sigmoid(g), the linear epilogue's silu
  for (int64_t i = 0; i < len; ++i)
    y[i] = gate[i] * u[i];
}

/// The one-input form: x [..., 2F] holds gate then up in each row.
Status siluMulPacked(KernelContext &ctx) {
  const KernelInput &x = ctx.input(0);
  if (x.shape.empty() || x.shape.back() % 2)
    return ctx.error("the single input '" + x.name + "' " +
                     shape::toString(x.shape) +
                     " must have an even last dim (gate then up)");
  const int64_t f = x.shape.back() / 2;
  const int64_t rows = dimProduct(x.shape, 0, x.shape.size() - 1);
  shape::Shape outShape = x.shape;
  outShape.back() = f;
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  if (rows == 0 || f == 0)
    return Status::ok();
  KernelOutput &o = ctx.output(0);
  float *y = o.as<float>();
  const float *in = x.as<float>();
  const bool sameStart = o.data == x.data;
  std::vector<float> scratch;
  if (!sameStart && rangesOverlap(o.data, size_t(rows * f) * 4, x.data,
                                  x.bytes())) { // not a planner layout
    scratch.assign(in, in + rows * 2 * f);
    in = scratch.data();
  }
  const int64_t perRow = numBlocks(f);
  auto runRows = [&](int64_t r0, int64_t r1) {
    ctx.parallelFor(
        (r1 - r0) * perRow, kGrainBlocks, [&](int64_t b, int64_t e) {
          for (int64_t item = b; item < e; ++item) {
            const int64_t r = r0 + item / perRow, i0 = item % perRow * kBlock;
            const float *row = in + r * 2 * f;
            siluMulBlock(row + i0, row + f + i0, y + r * f + i0,
                         std::min(kBlock, f - i0));
          }
        });
  };
  if (!sameStart) {
    runRows(0, rows);
    return Status::ok();
  }
  // In place: row r writes [rF, (r+1)F) and reads [2rF, 2(r+1)F). Row 0
  // overwrites its gate element by element after reading it. Rows [r0, 2r0)
  // write below 2r0·F, where only finished rows read, and read at or above
  // it, so each such wave runs in parallel once the previous one is done.
  runRows(0, 1);
  for (int64_t r0 = 1; r0 < rows; r0 *= 2)
    runRows(r0, std::min(rows, 2 * r0));
  return Status::ok();
}

Status siluMulKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  if (!ctx.hasInput(1))
    return siluMulPacked(ctx);
  if (Status s = ctx.expectInputDType(1, {DType::F32}); !s)
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
    for (int64_t blk = b; blk < e; ++blk) {
      const int64_t i0 = blk * kBlock;
      siluMulBlock(g + i0, u + i0, y + i0, std::min(kBlock, n - i0));
    }
  });
  return Status::ok();
}

/// geluF32's body, cloned per ISA: on the baseline ISA the tanh form's
/// passes around sigmoidF32 cost as much as it. Without contraction, as
/// on the baseline ISA: a vector loop and its scalar tail then give a value
/// the same bits wherever it lies (batch invariance). Defined before its
/// first use, as clang requires of a multiversioned function.
__attribute__((optimize("fp-contract=off"),
               target_clones("avx512f", "avx2", "default"))) void
geluPerIsa(const float *x, float *y, int64_t n, bool tanhForm) {
  if (!tanhForm)
    return geluErfF32(x, y, n);
  float t[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t len = std::min(kBlock, n - i0);
    const float *xb = x + i0;
    float *yb = y + i0;
    // 2·√(2/π) and 2·√(2/π)·0.044715.
    constexpr float c1 = 1.5957691216057308f, c3 = 0.0713548162726f;
    for (int64_t i = 0; i < len; ++i)
      t[i] = xb[i] * (c1 + c3 * xb[i] * xb[i]);
    sigmoidF32(t, t, len);
    for (int64_t i = 0; i < len; ++i)
      yb[i] = xb[i] * t[i];
  }
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
    const int64_t i0 = b * kBlock;
    geluF32(x + i0, y + i0, std::min(e * kBlock, n) - i0, useTanh);
  });
  return Status::ok();
}

} // namespace

// Also linear's epilogue (cpu/Activation.h).
void geluF32(const float *x, float *y, int64_t n, bool tanhForm) {
  geluPerIsa(x, y, n, tanhForm);
}

void addLlmActivationKernels(std::vector<KernelImpl> &table) {
  table.push_back({"silu_mul", siluMulKernel});
  table.push_back({"gelu", geluKernel});
}

} // namespace ingot::cpu
