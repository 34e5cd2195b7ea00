//===- ReduceMinMax.cpp - Max or min of f32 tensors and rows --------------===//
//
// The reduction DynamicQuantizeLinear's range needs on every activation:
// parallel chunks, both extremes in one pass 16 lanes wide with AVX-512,
// or a pass each 8 lanes wide with AVX2; and reduce's max/min over
// trailing axes, a row per output.
//
//===----------------------------------------------------------------------===//

#include "cpu/ReduceMinMax.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ingot::cpu {
namespace {

/// Max or min of p[0..m) (NaN if any is NaN), 8 lanes at a time: maxps
/// and minps skip NaNs, which an unordered compare records apart.
__attribute__((target("avx2"))) float minMaxAvx2(const float *p, int64_t m,
                                                 bool isMax) {
  __m256 best = _mm256_set1_ps(isMax ? -INFINITY : INFINITY);
  __m256 nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= m; i += 8) {
    const __m256 v = _mm256_loadu_ps(p + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    best = isMax ? _mm256_max_ps(v, best) : _mm256_min_ps(v, best);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, best);
  float r = lanes[0];
  for (int l = 1; l < 8; ++l)
    r = isMax ? std::max(r, lanes[l]) : std::min(r, lanes[l]);
  bool anyNan = _mm256_movemask_ps(nan) != 0;
  for (; i < m; ++i) {
    anyNan |= p[i] != p[i];
    r = isMax ? std::max(r, p[i]) : std::min(r, p[i]);
  }
  return anyNan ? NAN : r;
}

/// Both extremes of p[0..m) in one pass (NaN, both, if any is NaN), four
/// vectors of each at a time: one accumulator of each made every vminps /
/// vmaxps wait for the one before, and the two passes of minMaxAvx2 took
/// 0.5 cycles a value on Zen 4, a fifth of BERT-int8's DynamicQuantize.
__attribute__((target("avx512f"))) void
minAndMaxAvx512(const float *p, int64_t m, float *lo, float *hi) {
  constexpr int kAcc = 4;
  __m512 mn[kAcc], mx[kAcc];
  for (int a = 0; a < kAcc; ++a) {
    mn[a] = _mm512_set1_ps(INFINITY);
    mx[a] = _mm512_set1_ps(-INFINITY);
  }
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 16 * kAcc <= m; i += 16 * kAcc)
    for (int a = 0; a < kAcc; ++a) {
      const __m512 v = _mm512_loadu_ps(p + i + 16 * a);
      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      mn[a] = _mm512_maskz_min_ps(0xffff, v, mn[a]);
      mx[a] = _mm512_maskz_max_ps(0xffff, v, mx[a]);
    }
  for (; i < m; i += 16) {
    // The rest, masked: lanes past m keep +inf / -inf (and are not NaN).
    const __mmask16 k =
        m - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (m - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(k, p + i);
    nan |= _mm512_mask_cmp_ps_mask(k, v, v, _CMP_UNORD_Q);
    mn[0] = _mm512_mask_min_ps(mn[0], k, v, mn[0]);
    mx[0] = _mm512_mask_max_ps(mx[0], k, v, mx[0]);
  }
  // The lanes through memory: GCC 12's unmasked min/max and reductions
  // pass an undefined vector, which -Wmaybe-uninitialized reports.
  alignas(64) float lanes[2][kAcc][16];
  for (int a = 0; a < kAcc; ++a) {
    _mm512_store_ps(lanes[0][a], mn[a]);
    _mm512_store_ps(lanes[1][a], mx[a]);
  }
  float l = INFINITY, h = -INFINITY;
  for (int a = 0; a < kAcc; ++a)
    for (int j = 0; j < 16; ++j) {
      l = std::min(l, lanes[0][a][j]);
      h = std::max(h, lanes[1][a][j]);
    }
  *lo = nan ? NAN : l;
  *hi = nan ? NAN : h;
}

float minMaxRange(const float *p, int64_t m, bool isMax) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2)
    return minMaxAvx2(p, m, isMax);
  float r = isMax ? -INFINITY : INFINITY;
  for (int64_t i = 0; i < m; ++i) {
    if (p[i] != p[i])
      return NAN;
    r = isMax ? std::max(r, p[i]) : std::min(r, p[i]);
  }
  return r;
}

/// The reduce kernel's serial order: an element replaces the extreme when
/// it is strictly beyond it or NaN.
float rowMinMaxSerial(const float *p, int64_t n, bool isMax) {
  float acc = isMax ? -INFINITY : INFINITY;
  for (int64_t i = 0; i < n; ++i)
    if ((isMax ? p[i] > acc : p[i] < acc) || p[i] != p[i])
      acc = p[i];
  return acc;
}

} // namespace

float rowMinMaxF32(const float *row, int64_t n, bool isMax) {
  if (n == 0)
    return isMax ? -INFINITY : INFINITY;
  // Lanes may meet equal zeros in another order, and minMaxRange gives a
  // canonical NaN: those rows take the serial loop.
  const float r = minMaxRange(row, n, isMax);
  return r == 0.0f || r != r ? rowMinMaxSerial(row, n, isMax) : r;
}

namespace {

/// Whether the reduced axes (1 in `kept`, not 1 in `s`) all come after
/// the kept ones: then each output is one contiguous row of the input.
bool reducesTrailingAxes(const shape::Shape &s, const shape::Shape &kept) {
  bool reducing = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1)
      continue;
    if (kept[i] == 1)
      reducing = true;
    else if (reducing)
      return false;
  }
  return true;
}

} // namespace

bool minMaxTrailingRowsF32(KernelContext &ctx, const shape::Shape &kept,
                           bool isMax) {
  if (!reducesTrailingAxes(ctx.input(0).shape, kept))
    return false;
  const int64_t rows = shape::numElements(kept);
  const float *in = ctx.input(0).as<float>();
  float *out = ctx.output(0).as<float>();
  const int64_t d = rows ? ctx.input(0).numElements() / rows : 0;
  ctx.parallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, d)),
                  [&](int64_t r0, int64_t r1) {
                    for (int64_t r = r0; r < r1; ++r)
                      out[r] = rowMinMaxF32(in + r * d, d, isMax);
                  });
  return true;
}

namespace {

/// The extreme of per-chunk extremes: NaN if any is.
float mergeParts(const std::vector<float> &part, bool isMax) {
  float r = isMax ? -INFINITY : INFINITY;
  for (float v : part)
    r = v != v || (isMax ? v > r : v < r) ? v : r;
  return r;
}

} // namespace

float minMaxAllF32(KernelContext &ctx, const float *in, int64_t n, bool isMax) {
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<float> part(static_cast<size_t>(chunks));
  ctx.parallelFor(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      part[size_t(c)] =
          minMaxRange(in + c * kChunk, std::min(kChunk, n - c * kChunk), isMax);
  });
  return mergeParts(part, isMax);
}

void minAndMaxAllF32(KernelContext &ctx, const float *in, int64_t n, float *lo,
                     float *hi) {
  // Chunks of 64 KiB: the max pass (without AVX-512) finds the chunk in L2
  // after the min pass, and a BERT layer's 128 x 384 activations still split
  // over two threads (in chunks of 256 KiB they took one pass each on one
  // thread).
  constexpr int64_t kChunk = 1 << 14;
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<float> mins(static_cast<size_t>(chunks)), maxs(mins.size());
  ctx.parallelFor(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t len = std::min(kChunk, n - c * kChunk);
      if (avx512) {
        minAndMaxAvx512(in + c * kChunk, len, &mins[size_t(c)],
                        &maxs[size_t(c)]);
        continue;
      }
      mins[size_t(c)] = minMaxRange(in + c * kChunk, len, false);
      maxs[size_t(c)] = minMaxRange(in + c * kChunk, len, true);
    }
  });
  *lo = mergeParts(mins, false);
  *hi = mergeParts(maxs, true);
}

} // namespace ingot::cpu
