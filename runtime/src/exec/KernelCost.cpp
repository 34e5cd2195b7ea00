//===- KernelCost.cpp - Bytes and FLOPs of one kernel call ----------------===//
//
// Rules, by kernel family (see KernelCost.h for what the numbers are):
//   default       bytes = every present input + every output, FLOPs = 0
//   linear        bytes = x + W (+ bias) + y; FLOPs = 2·m·n·k
//   matmul, gemm  bytes = default; FLOPs = 2·(output elements)·k
//   conv          bytes = default; FLOPs = 2·(output elements)·C/group·taps
//                 (the weight's elements per output channel)
//   attention     see attentionCost below
//   norms         bytes = default; a few FLOPs per element of x
//   elementwise   bytes = default; FLOPs per output element
//   gather        bytes = indices + the rows read + the rows written (not
//                 the whole embedding table, which the default would count)
// Per-element FLOP counts treat exp/erf/tanh as one operation: the point is
// the order of magnitude, and such kernels are bandwidth-bound anyway.
//
//===----------------------------------------------------------------------===//

#include "exec/KernelCost.h"

#include "cpu/KernelRegistry.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ingot {
namespace {

using cpu::KernelContext;
using cpu::KernelInput;

double inputBytes(const KernelContext &ctx, size_t i) {
  return ctx.hasInput(i) ? double(ctx.input(i).bytes()) : 0.0;
}

double outputBytes(const KernelContext &ctx, size_t i) {
  const cpu::KernelOutput &o = ctx.outputs[i];
  return double(shape::numElements(o.shape)) * double(dtypeSize(o.dtype));
}

double defaultBytes(const KernelContext &ctx) {
  double b = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    b += inputBytes(ctx, i);
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    b += outputBytes(ctx, i);
  return b;
}

double outputElements(const KernelContext &ctx) {
  return ctx.numOutputs() ? double(shape::numElements(ctx.outputs[0].shape))
                          : 0.0;
}

/// FLOPs per output element of the elementwise and normalisation kernels,
/// or -1 when `k` is none of them.
double flopsPerElement(std::string_view k) {
  if (k == "add" || k == "sub" || k == "mul" || k == "div" || k == "pow" ||
      k == "binary_math" || k == "compare" || k == "where" || k == "relu" ||
      k == "neg" || k == "exp" || k == "erf" || k == "sqrt" || k == "tanh" ||
      k == "sigmoid" || k == "unary_math" || k == "fused_elementwise")
    return 1;
  if (k == "silu_mul") // x / (1 + exp(-x)) * up
    return 4;
  if (k == "gelu")
    return 8;
  if (k == "rope") // x·cos ∓ y·sin per rotated element
    return 3;
  if (k == "softmax" || k == "log_softmax") // max, sub, exp, sum, scale
    return 5;
  if (k == "rms_norm") // square, sum, scale, weight
    return 4;
  if (k == "add_rms_norm") // the residual add, then rms_norm
    return 5;
  if (k == "layer_norm") // mean, centre, square, sum, scale, weight, bias
    return 7;
  if (k == "add_layer_norm")
    return 8;
  return -1;
}

/// The dense attention kernel: q·kᵀ and p·v, 2 flops per multiply-add,
/// plus the softmax's 5 per score; bytes of q, k, v, mask and y.
KernelCost denseAttentionCost(const cpu::KernelContext &ctx) {
  KernelCost c;
  c.bytes = defaultBytes(ctx);
  if (ctx.numInputs() < 3 || ctx.input(0).shape.size() != 4 ||
      ctx.input(1).shape.size() != 4 || ctx.input(2).shape.size() != 4)
    return c;
  const shape::Shape &q = ctx.input(0).shape;
  const double scores = double(q[0]) * double(q[1]) * double(q[2]) *
                        double(ctx.input(1).shape[1]);
  c.flops =
      scores * (2.0 * double(q[3]) + 2.0 * double(ctx.input(2).shape[3]) + 5.0);
  return c;
}

/// Input `i` as int64 indices (int32 or int64 data), or empty.
std::vector<int64_t> readIndices(const KernelContext &ctx, size_t i) {
  std::vector<int64_t> v;
  if (!ctx.hasInput(i))
    return v;
  const KernelInput &in = ctx.input(i);
  const int64_t n = in.numElements();
  if (!in.data || (in.dtype != DType::I64 && in.dtype != DType::I32))
    return v;
  v.resize(n);
  for (int64_t k = 0; k < n; ++k)
    v[k] = in.dtype == DType::I64 ? in.as<int64_t>()[k]
                                  : int64_t(in.as<int32_t>()[k]);
  return v;
}

/// The input bound to the model input `name` (the engine's step inputs keep
/// their names), else the index `fallback` in paged_attention's layout.
size_t findInput(const KernelContext &ctx, std::string_view name,
                 size_t fallback) {
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i) && ctx.input(i).name == name)
      return i;
  return fallback;
}

/// paged_attention / rope_paged_attention over the f32 paged cache.
///   FLOPs: per token and query head, q·kᵀ and p·v over the token's context
///   c (its position + 1, clipped to the sliding window) = 4·heads·D·c.
///   Bytes: K and V rows of each sequence's context read once (the union
///   of its tokens' windows: its query tokens share the rows through the
///   cache), the new K/V rows written into the cache, the q, k and v
///   columns read (they may be column ranges of one merged qkv input, so
///   not the inputs' sizes), every other operand (indices) and the output.
/// Context comes from the `positions` and `query_ends` inputs, which hold
/// the step's absolute positions and per-sequence token ends.
KernelCost attentionCost(const KernelContext &ctx) {
  KernelCost c;
  c.bytes = defaultBytes(ctx); // if the attrs are unusable
  int64_t heads = 0, kvHeads = 0, headDim = 0, window = 0;
  if (!ctx.attrInt("num_heads", &heads) ||
      !ctx.attrInt("num_kv_heads", &kvHeads, heads) ||
      !ctx.attrInt("head_dim", &headDim) ||
      !ctx.attrInt("sliding_window", &window, int64_t(0)) || heads <= 0 ||
      kvHeads <= 0 || headDim <= 0)
    return c;
  const std::vector<int64_t> positions =
      readIndices(ctx, findInput(ctx, "positions", 3));
  std::vector<int64_t> ends = readIndices(ctx, findInput(ctx, "query_ends", 6));
  const int64_t tokens = int64_t(positions.size());
  if (ends.empty() || ends.back() != tokens)
    ends = {tokens}; // unknown boundaries: one sequence
  const double rowBytes = double(kvHeads * headDim) * sizeof(float);
  c.bytes = double(tokens * (heads + 2 * kvHeads) * headDim) * sizeof(float);
  for (size_t i = 3; i < ctx.numInputs(); ++i)
    c.bytes += inputBytes(ctx, i);
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    c.bytes += outputBytes(ctx, i);
  auto windowStart = [&](int64_t p) {
    return window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
  };
  int64_t begin = 0;
  for (int64_t end : ends) {
    end = std::clamp<int64_t>(end, begin, tokens);
    int64_t lo = INT64_MAX, hi = -1;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t p = std::max<int64_t>(0, positions[t]);
      c.flops += 4.0 * double(heads * headDim) * double(p - windowStart(p) + 1);
      lo = std::min(lo, windowStart(p));
      hi = std::max(hi, p);
    }
    if (hi >= 0)
      c.bytes += 2 * rowBytes * double(hi - lo + 1); // K and V read
    begin = end;
  }
  c.bytes += 2 * rowBytes * double(tokens); // K and V written to the cache
  return c;
}

KernelCost linearCost(const KernelContext &ctx) {
  KernelCost c;
  c.bytes = defaultBytes(ctx);
  if (!ctx.hasInput(0) || ctx.input(0).shape.empty() || !ctx.numOutputs() ||
      ctx.outputs[0].shape.empty())
    return c;
  const double k = double(ctx.input(0).shape.back());
  // y has m·n elements: 2·m·n·k.
  c.flops = 2.0 * outputElements(ctx) * k;
  return c;
}

KernelCost matmulCost(const KernelContext &ctx, bool gemm) {
  KernelCost c;
  c.bytes = defaultBytes(ctx);
  if (!ctx.hasInput(0) || ctx.input(0).shape.empty() || !ctx.numOutputs())
    return c;
  const shape::Shape &a = ctx.input(0).shape;
  const shape::Shape &y = ctx.outputs[0].shape;
  double k = double(a.back());
  // gemm's A is [m, k] or, transposed, [k, m]: its size over m is k either
  // way.
  if (gemm && !y.empty() && y[0] > 0)
    k = double(shape::numElements(a)) / double(y[0]);
  c.flops = 2.0 * outputElements(ctx) * k;
  return c;
}

KernelCost convCost(const KernelContext &ctx) {
  KernelCost c;
  c.bytes = defaultBytes(ctx);
  if (ctx.numInputs() < 2 || !ctx.hasInput(1) || !ctx.numOutputs())
    return c;
  const shape::Shape &w = ctx.input(1).shape;
  if (w.empty() || w[0] <= 0)
    return c;
  // w is [M, C/group, taps...]: each output element takes one row of it.
  c.flops = 2.0 * outputElements(ctx) *
            (double(shape::numElements(w)) / double(w[0]));
  return c;
}

KernelCost gatherCost(const KernelContext &ctx) {
  KernelCost c;
  c.bytes = defaultBytes(ctx);
  if (ctx.numInputs() < 2 || !ctx.numOutputs())
    return c;
  c.bytes = inputBytes(ctx, 1) + 2 * outputBytes(ctx, 0);
  return c;
}

} // namespace

KernelCost estimateKernelCost(const cpu::KernelContext &ctx) {
  const std::string_view k = ctx.kernel();
  if (k == "linear")
    return linearCost(ctx);
  if (k == "matmul" || k == "gemm")
    return matmulCost(ctx, k == "gemm");
  if (k == "paged_attention" || k == "rope_paged_attention")
    return attentionCost(ctx);
  if (k == "attention")
    return denseAttentionCost(ctx);
  if (k == "gather")
    return gatherCost(ctx);
  if (k == "conv")
    return convCost(ctx);
  KernelCost c;
  c.bytes = defaultBytes(ctx);
  if (double per = flopsPerElement(k); per > 0) {
    // Norms do their work per element of x; elementwise per result.
    const bool norm = k.find("norm") != std::string::npos;
    c.flops =
        per * (norm && ctx.hasInput(0) ? double(ctx.input(0).numElements())
                                       : outputElements(ctx));
  }
  return c;
}

} // namespace ingot
