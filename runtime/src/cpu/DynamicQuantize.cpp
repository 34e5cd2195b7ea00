//===- DynamicQuantize.cpp - dynamic_quantize_linear ----------------------===//
//
// ONNX DynamicQuantizeLinear as one kernel: the tensor's min and max, the
// scale and zero point from them, then one pass that quantises. Every step
// is the f32 operation the unfused graph (reduce, binary_math, sub, div,
// where, the quantising fused_elementwise region and the cast to uint8)
// performs, in its order, so the results are the same bits.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelRegistry.h"
#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"
#include "cpu/ReduceMinMax.h"

#include <immintrin.h>

namespace ingot::cpu {
namespace {

/// NaN-propagating max and min, as binary_math and fused_elementwise.
float maxNan(float x, float y) {
  return x != x ? x : y != y ? y : (x < y ? y : x);
}
float minNan(float x, float y) {
  return x != x ? x : y != y ? y : (y < x ? y : x);
}

/// saturate(round(v / scale) + zero) to [0, 255] as uint8 (NaN: 0, as
/// the cast kernel converts it).
inline uint8_t quantizeOne(float v, float scale, float zero) {
  const float q = minNan(maxNan(roundHalfEven(v / scale) + zero, 0.0f), 255.0f);
  return uint8_t(int32_t(q == q ? q : 0.0f));
}

void quantizeScalar(const float *x, uint8_t *y, int64_t n, float scale,
                    float zero) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = quantizeOne(x[i], scale, zero);
}

/// The same with AVX-512 (GCC does not vectorise the scalar loop): the
/// rounding is the same half-to-even, max_ps/min_ps with the constant first
/// return a NaN lane as it is, and cvttps gives NaN 0x80000000, whose low
/// byte is the 0 quantizeOne stores.
__attribute__((target("avx512f"))) void
quantizeAvx512(const float *x, uint8_t *y, int64_t n, float scale, float zero) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zero);
  const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(255.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 q = _mm512_div_ps(_mm512_loadu_ps(x + i), s);
    q = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_add_ps(q, z)));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(y + i),
                     _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q)));
  }
  quantizeScalar(x + i, y + i, n - i, scale, zero);
}

void quantizeRange(const float *x, uint8_t *y, int64_t n, float scale,
                   float zero) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512)
    quantizeAvx512(x, y, n, scale, zero);
  else
    quantizeScalar(x, y, n, scale, zero);
}

Status dynamicQuantizeLinearKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 3); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  for (size_t i : {1, 2})
    if (Status s = ctx.setOutputShape(i, {}); !s)
      return s;
  const int64_t n = x.numElements();
  const float *in = x.as<float>();
  // An empty tensor has the range [0, 0], as the unfused reductions give.
  float lo = 0.0f, hi = 0.0f;
  if (n)
    minAndMaxAllF32(ctx, in, n, &lo, &hi);
  lo = minNan(lo, 0.0f), hi = maxNan(hi, 0.0f);
  const float span = hi - lo;
  const float scale = span == 0.0f ? 1.0f : span / 255.0f;
  const uint8_t zero = quantizeOne(-lo, scale, 0.0f);
  *ctx.output(1).as<float>() = scale;
  *ctx.output(2).as<uint8_t>() = zero;
  uint8_t *out = ctx.output(0).as<uint8_t>();
  ctx.parallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    quantizeRange(in + b, out + b, e - b, scale, float(zero));
  });
  return Status::ok();
}

} // namespace

void addDynamicQuantizeKernels(std::vector<KernelImpl> &table) {
  table.push_back({"dynamic_quantize_linear", dynamicQuantizeLinearKernel});
}

} // namespace ingot::cpu
