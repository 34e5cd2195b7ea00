//===- KernelUtil.cpp - Shared helpers of the CPU kernels -----------------===//

#include "cpu/KernelUtil.h"

#include <algorithm>
#include <limits>

namespace ingot::cpu {

bool makeBroadcastPlan(const shape::Shape &out,
                       const std::vector<const shape::Shape *> &ins,
                       BroadcastPlan *plan) {
  const int rank = out.size();
  const int ops = ins.size();
  if (ops > kMaxOperands)
    return false;
  // Full-rank element strides, 0 where the operand is broadcast.
  std::vector<std::vector<int64_t>> strides(ops, std::vector<int64_t>(rank, 0));
  for (int k = 0; k < ops; ++k) {
    const shape::Shape &s = *ins[k];
    if (int(s.size()) > rank)
      return false;
    int64_t stride = 1;
    for (int i = int(s.size()) - 1; i >= 0; --i) {
      int o = rank - int(s.size()) + i;
      if (s[i] == out[o])
        strides[k][o] = out[o] == 1 ? 0 : stride;
      else if (s[i] != 1)
        return false;
      stride *= s[i];
    }
  }
  // Merge dim i into the running (inner) dim when every operand is
  // contiguous across the boundary; drop size-1 dims.
  plan->operands = ops;
  plan->total = shape::numElements(out);
  int n = 0;
  int64_t dims[kMaxRank + 1];
  int64_t st[kMaxOperands][kMaxRank + 1];
  for (int i = rank - 1; i >= 0; --i) {
    if (out[i] == 1)
      continue;
    bool merge = n > 0;
    for (int k = 0; k < ops && merge; ++k)
      merge = strides[k][i] == st[k][n - 1] * dims[n - 1];
    if (merge) {
      dims[n - 1] *= out[i];
      continue;
    }
    if (n == kMaxRank)
      return false;
    dims[n] = out[i];
    for (int k = 0; k < ops; ++k)
      st[k][n] = strides[k][i];
    ++n;
  }
  if (n == 0) { // scalar or all-ones output
    dims[0] = 1;
    for (int k = 0; k < ops; ++k)
      st[k][0] = 0;
    n = 1;
  }
  // Stored inner-first above; the plan is outer-first.
  plan->rank = n;
  for (int d = 0; d < n; ++d) {
    plan->dims[d] = dims[n - 1 - d];
    for (int k = 0; k < ops; ++k)
      plan->strides[k][d] = st[k][n - 1 - d];
  }
  return true;
}

const void *detachIfAliased(const KernelInput &in, const void *out,
                            size_t outBytes, const shape::Shape &outShape,
                            DType outDType, std::vector<uint8_t> &scratch) {
  size_t inBytes = in.bytes();
  if (!rangesOverlap(in.data, inBytes, out, outBytes))
    return in.data;
  if (in.data == out && in.shape == outShape &&
      dtypeSize(in.dtype) == dtypeSize(outDType))
    return in.data;
  scratch.assign(static_cast<const uint8_t *>(in.data),
                 static_cast<const uint8_t *>(in.data) + inBytes);
  return scratch.data();
}

Status readIndexVector(const KernelContext &ctx, size_t input,
                       std::vector<int64_t> *out) {
  const KernelInput &in = ctx.input(input);
  if (in.dtype != DType::I64 && in.dtype != DType::I32)
    return ctx.error("input " + std::to_string(input) + " '" + in.name +
                     "' must be int64 or int32, got " + dtypeName(in.dtype));
  if (in.shape.size() > 1)
    return ctx.error("input " + std::to_string(input) + " '" + in.name +
                     "' must be a scalar or 1-D, got shape " +
                     shape::toString(in.shape));
  int64_t n = in.numElements();
  out->resize(n);
  for (int64_t i = 0; i < n; ++i)
    (*out)[i] = in.dtype == DType::I64 ? in.as<int64_t>()[i]
                                       : int64_t(in.as<int32_t>()[i]);
  return Status::ok();
}

namespace {
constexpr int kLanes = 16;
constexpr int64_t kBlock = 256;

struct Identity {
  __attribute__((always_inline)) float operator()(float v) const { return v; }
};
struct SquaredDeviation {
  float mean;
  __attribute__((always_inline)) float operator()(float v) const {
    const float d = v - mean;
    return d * d;
  }
};

/// Sums f(x[i]) over [0, n) as described in KernelUtil.h. Inlined into
/// each ISA's clone below with its functor (a lambda would stay a
/// baseline-ISA call per element), so the 16 lanes are one zmm with
/// AVX-512 and two ymm with AVX2; without contraction every clone makes
/// the same roundings in the same order, so the sum has the same bits.
template <typename F>
__attribute__((always_inline)) inline double blockedSum(const float *x,
                                                        int64_t n, F f) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    float acc[kLanes] = {};
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int j = 0; j < kLanes; ++j)
        acc[j] += f(x[i + j]);
    // The lanes pairwise in double, four adds deep where sixteen in a row
    // each waited for the last (~64 cycles a block: a third of a BERT
    // layer norm's time), then the tail.
    double d[kLanes / 2];
    for (int j = 0; j < kLanes / 2; ++j)
      d[j] = double(acc[j]) + double(acc[j + kLanes / 2]);
    for (int w = kLanes / 4; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j)
        d[j] += d[j + w];
    double s = d[0];
    for (; i < e; ++i)
      s += f(x[i]);
    total += s;
  }
  return total;
}
} // namespace

__attribute__((target_clones("avx512f", "avx2", "default"),
               optimize("fp-contract=off"))) double
sumF32(const float *x, int64_t n) {
  return blockedSum(x, n, Identity{});
}

__attribute__((target_clones("avx512f", "avx2", "default"),
               optimize("fp-contract=off"))) double
sumSquaredDeviationF32(const float *x, int64_t n, float mean) {
  return blockedSum(x, n, SquaredDeviation{mean});
}

float maxF32(const float *x, int64_t n) {
  const float lowest = -std::numeric_limits<float>::infinity();
  float acc[kLanes];
  std::fill(acc, acc + kLanes, lowest);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
  float m = lowest;
  for (; i < n; ++i)
    m = x[i] > m ? x[i] : m;
  for (int j = 0; j < kLanes; ++j)
    m = acc[j] > m ? acc[j] : m;
  if (m == lowest) // all -inf, or NaNs: let NaN through as the max
    for (int64_t k = 0; k < n; ++k)
      if (x[k] != x[k])
        return x[k];
  return m;
}

} // namespace ingot::cpu
