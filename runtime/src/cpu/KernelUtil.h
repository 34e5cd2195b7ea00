//===- KernelUtil.h - Shared helpers of the CPU kernels ---------*- C++ -*-===//
//
// Broadcast iteration: operand shapes are turned into per-operand element
// strides over the output (0 along broadcast dims), adjacent dims that stay
// contiguous for every operand are merged, and the output is walked in
// "runs" along the innermost merged dim. The common cases (same shapes,
// scalar operand, bias over the last dims) become one or a few long runs
// with unit or zero stride, which the compiler vectorises.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelRegistry.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ingot::cpu {

constexpr int kMaxRank = 16;
constexpr int kMaxOperands = 4;

/// Elements per parallel chunk for cheap elementwise work; below this a
/// kernel runs on the calling thread alone.
constexpr int64_t kElementwiseGrain = 32 * 1024;

struct BroadcastPlan {
  int rank = 0;     // merged rank, >= 1
  int operands = 0; // inputs only; the output is dense
  int64_t total = 0;
  int64_t dims[kMaxRank];
  int64_t strides[kMaxOperands][kMaxRank];
};

/// Builds the plan for operands broadcast to `out`; false if the rank is
/// above kMaxRank or an operand does not broadcast to `out`.
bool makeBroadcastPlan(const shape::Shape &out,
                       const std::vector<const shape::Shape *> &ins,
                       BroadcastPlan *plan);

/// Calls fn(offsets, count) for each run of output elements in [begin, end):
/// offsets[k] is operand k's element offset at the run start; along the run
/// the operand advances by plan.strides[k][plan.rank - 1] (0 or 1).
template <typename Fn>
void forEachRun(const BroadcastPlan &p, int64_t begin, int64_t end, Fn &&fn) {
  const int r = p.rank;
  int64_t idx[kMaxRank];
  int64_t off[kMaxOperands] = {0, 0, 0, 0};
  int64_t rem = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % p.dims[d];
    rem /= p.dims[d];
    for (int k = 0; k < p.operands; ++k)
      off[k] += idx[d] * p.strides[k][d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t count = std::min(p.dims[r - 1] - idx[r - 1], end - pos);
    fn(static_cast<const int64_t *>(off), count);
    pos += count;
    idx[r - 1] += count;
    for (int k = 0; k < p.operands; ++k)
      off[k] += count * p.strides[k][r - 1];
    for (int d = r - 1; d > 0 && idx[d] == p.dims[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
      for (int k = 0; k < p.operands; ++k)
        off[k] += p.strides[k][d - 1] - p.dims[d] * p.strides[k][d];
    }
  }
}

/// Returns the data an elementwise kernel may read for `in` while writing
/// `outBytes` bytes at `out`. Reading and writing the same element index is
/// safe, so an input that exactly coincides with the output is used as is;
/// any other overlap (e.g. a broadcast operand living in the output's
/// memory) is copied to `scratch` first.
const void *detachIfAliased(const KernelInput &in, const void *out,
                            size_t outBytes, const shape::Shape &outShape,
                            DType outDType, std::vector<uint8_t> &scratch);

/// Whether two byte ranges overlap.
inline bool rangesOverlap(const void *a, size_t aBytes, const void *b,
                          size_t bBytes) {
  auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && pa < pb + bBytes && pb < pa + aBytes;
}

/// Reads a rank-0/1 integer tensor (i64 or i32) into a vector.
Status readIndexVector(const KernelContext &ctx, size_t input,
                       std::vector<int64_t> *out);

// Row reductions for normalisation kernels. Blocks of 256 values are summed
// in 16 float lanes (vectorisable, ~16 additions deep), the lanes pairwise
// in double, and the block sums added in double, so the result keeps f32
// accuracy for any length.
double sumF32(const float *x, int64_t n);
/// Sum of (x[i] - mean)^2.
double sumSquaredDeviationF32(const float *x, int64_t n, float mean);
/// Largest value (-inf for n == 0; NaNs are ignored unless all are NaN).
float maxF32(const float *x, int64_t n);

/// Product of dims in [from, to).
inline int64_t dimProduct(const shape::Shape &s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= s[i];
  return p;
}

/// Fixed-width unsigned type of a given byte size, for dtype-agnostic copies.
template <size_t N> struct UIntOfSize;
template <> struct UIntOfSize<1> { using type = uint8_t; };
template <> struct UIntOfSize<2> { using type = uint16_t; };
template <> struct UIntOfSize<4> { using type = uint32_t; };
template <> struct UIntOfSize<8> { using type = uint64_t; };

/// Calls fn.template operator()<T>() with T the unsigned type of `bytes`.
template <typename Fn> void dispatchBySize(size_t bytes, Fn &&fn) {
  switch (bytes) {
  case 1:
    fn.template operator()<uint8_t>();
    break;
  case 2:
    fn.template operator()<uint16_t>();
    break;
  case 4:
    fn.template operator()<uint32_t>();
    break;
  default:
    fn.template operator()<uint64_t>();
    break;
  }
}

// bfloat16 / float16 <-> float, round-to-nearest-even.
inline float halfToFloat(uint16_t h) { return f16BitsToFloat(h); }
inline uint16_t floatToHalf(float f) { return floatToF16Bits(f); }
inline float bf16ToFloat(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t floatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40); // keep NaN a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

} // namespace ingot::cpu
