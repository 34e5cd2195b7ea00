//===- LinearDecode.cpp - Portable decode kernels and ISA choice ----------===//
//
// The portable kernels widen a short run of weights into an f32 buffer and
// run plain loops over it (16 independent lanes, which the compiler
// vectorises for the baseline ISA). They are the fallback for CPUs without
// AVX2 and the reference the ISA kernels are tested against.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"
#include "cpu/Linear.h"

#include <algorithm>
#include <cstring>

namespace ingot::cpu {
namespace {

constexpr int64_t kRun = 256; // weights widened per step
constexpr int kLanes = 16;

void widenGeneric(DType t, const void *src, int64_t count, float *dst) {
  if (t == DType::F32) {
    std::memcpy(dst, src, size_t(count) * sizeof(float));
    return;
  }
  const auto *s = static_cast<const uint16_t *>(src);
  if (t == DType::BF16)
    for (int64_t i = 0; i < count; ++i)
      dst[i] = bf16ToFloat(s[i]);
  else
    for (int64_t i = 0; i < count; ++i)
      dst[i] = halfToFloat(s[i]);
}

const uint8_t *elementAt(const LinearDecodeArgs &a, int64_t index) {
  return static_cast<const uint8_t *>(a.w) + index * dtypeSize(a.wType);
}

/// Row j's weights [k0, k0 + len) widened into `out`; kRun is a multiple
/// of the "nk16" chunk, so with packed weights `len` values are whole
/// chunks then (at the end of the row) the row's contiguous K tail.
void widenRowRun(const LinearDecodeArgs &a, int64_t j, int64_t k0, int64_t len,
                 float *out) {
  if (!a.nk16) {
    widenGeneric(a.wType, elementAt(a, j * a.k + k0), len, out);
    return;
  }
  const size_t bytes = dtypeSize(a.wType);
  const int64_t chunk = nk16Chunk(bytes), full = a.k / chunk * chunk;
  for (int64_t c = k0; c < k0 + len;) {
    const int64_t run = c < full ? chunk : k0 + len - c;
    widenGeneric(a.wType, elementAt(a, nk16Index(j, c, a.n, a.k, bytes)), run,
                 out + (c - k0));
    c += run;
  }
}

void nkGeneric(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  static_assert(kRun % nk16Chunk(2) == 0 && kRun % nk16Chunk(4) == 0);
  float wf[kRun];
  for (int64_t j = n0; j < n1; ++j) {
    float lanes[kLinearNkMaxRows][kLanes] = {};
    float tail[kLinearNkMaxRows] = {};
    for (int64_t k0 = 0; k0 < a.k; k0 += kRun) {
      const int64_t len = std::min(kRun, a.k - k0);
      widenRowRun(a, j, k0, len, wf);
      const int64_t vEnd = len / kLanes * kLanes;
      for (int64_t r = 0; r < a.m; ++r) {
        const float *xr = a.x + r * a.k + k0;
        for (int64_t i = 0; i < vEnd; i += kLanes)
          for (int l = 0; l < kLanes; ++l)
            lanes[r][l] += xr[i + l] * wf[i + l];
        for (int64_t i = vEnd; i < len; ++i)
          tail[r] += xr[i] * wf[i];
      }
    }
    for (int64_t r = 0; r < a.m; ++r) {
      float s = tail[r];
      for (int l = 0; l < kLanes; ++l)
        s += lanes[r][l];
      a.y[r * a.n + j] = a.bias ? s + a.bias[j] : s;
    }
  }
}

void knGeneric(const LinearDecodeArgs &a, int64_t n0, int64_t n1) {
  const int64_t width = linearKnMaxWidth(a.m);
  float accMem[kLinearKnAccFloats], wf[kLinearKnAccFloats];
  float *acc[kLinearKnMaxRows];
  for (int64_t r = 0; r < a.m; ++r)
    acc[r] = accMem + r * width;
  for (int64_t j0 = n0; j0 < n1; j0 += width) {
    const int64_t nn = std::min(width, n1 - j0);
    for (int64_t r = 0; r < a.m; ++r)
      std::fill(acc[r], acc[r] + nn, 0.0f);
    for (int64_t kk = 0; kk < a.k; ++kk) {
      widenGeneric(a.wType, elementAt(a, kk * a.n + j0), nn, wf);
      for (int64_t r = 0; r < a.m; ++r) {
        const float xv = a.x[r * a.k + kk];
        for (int64_t c = 0; c < nn; ++c)
          acc[r][c] += xv * wf[c];
      }
    }
    for (int64_t r = 0; r < a.m; ++r)
      for (int64_t c = 0; c < nn; ++c)
        a.y[r * a.n + j0 + c] = a.bias ? acc[r][c] + a.bias[j0 + c] : acc[r][c];
  }
}

} // namespace

const LinearKernelSet &genericLinearKernels() {
  static const LinearKernelSet set{nkGeneric, knGeneric, widenGeneric, nullptr,
                                   nullptr};
  return set;
}

const LinearKernelSet &bestLinearKernels() {
  static const LinearKernelSet *best = [] {
    // Same ISA as the GEMM (so INGOT_GEMM_ISA caps both); AVX2 also needs
    // F16C for the f16 weights.
    switch (bestGemmIsa()) {
    case GemmIsa::Avx512:
      return &avx512LinearKernels();
    case GemmIsa::Avx2:
      if (__builtin_cpu_supports("f16c"))
        return &avx2LinearKernels();
      return &genericLinearKernels();
    case GemmIsa::Generic:
      break;
    }
    return &genericLinearKernels();
  }();
  return *best;
}

} // namespace ingot::cpu
