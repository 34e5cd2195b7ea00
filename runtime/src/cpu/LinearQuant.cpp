//===- LinearQuant.cpp - Portable quantised linear and the ISA choice -----===//
//
// The portable kernel performs the x86 kernel's operations one lane at a
// time (LinearQuant.h). It is the fallback for CPUs without AVX2 and the
// reference the x86 kernel is tested against bitwise.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"
#include "cpu/KernelUtil.h"
#include "cpu/LinearQuant.h"
#include "cpu/LinearQuantUtil.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ingot::cpu {
namespace {

float readHalf(const uint8_t *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return halfToFloat(h);
}

float reduceAdd8(const float *v) {
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

/// Row j of the weight dequantised (widenGroup's factors times d).
template <DType T>
void dequantRow(const QuantLinearArgs &a, int64_t j, float *out) {
  const int64_t rowBytes = quantRowBytes(T, a.k, a.group);
  const uint8_t *blk = static_cast<const uint8_t *>(a.w) + j * rowBytes;
  for (int64_t k0 = 0; k0 < a.k; k0 += a.group) {
    const int64_t gs = std::min(a.group, a.k - k0);
    const float d = readHalf(blk) * groupScaleFactor(T);
    const float m = T == DType::Q4M ? readHalf(blk + 2) : 0.0f;
    widenGroup<T>(blk + quantHeaderBytes(T), gs, out + k0);
    for (int64_t v = k0; v < k0 + gs; ++v)
      out[v] = T == DType::Q4M ? std::fma(out[v], d, m) : out[v] * d;
    blk += quantBlockBytes(T, gs);
  }
}

template <DType T>
void nkRange(const QuantLinearArgs &a, int64_t n0, int64_t n1) {
  std::vector<float> w(size_t(a.k));
  for (int64_t j = n0; j < n1; ++j) {
    dequantRow<T>(a, j, w.data());
    for (int64_t r = a.row0; r < a.row0 + a.m; ++r) {
      const float *x = a.x + r * a.k;
      float lanes[8] = {}, tail = 0;
      for (int64_t k0 = 0; k0 < a.k; k0 += a.group) {
        const int64_t gs = std::min(a.group, a.k - k0), vec = gs / 8 * 8;
        for (int64_t v = 0; v < vec; v += 8)
          for (int l = 0; l < 8; ++l)
            lanes[l] = std::fma(x[k0 + v + l], w[size_t(k0 + v + l)], lanes[l]);
        for (int64_t v = vec; v < gs; ++v)
          tail = std::fma(x[k0 + v], w[size_t(k0 + v)], tail);
      }
      const float s = reduceAdd8(lanes) + tail;
      a.y[(r - a.row0) * a.n + j] = a.bias ? s + a.bias[j] : s;
    }
  }
}

void nkGeneric(const QuantLinearArgs &a, int64_t n0, int64_t n1) {
  switch (a.wType) {
  case DType::Q8:
    return nkRange<DType::Q8>(a, n0, n1);
  case DType::Q4:
    return nkRange<DType::Q4>(a, n0, n1);
  case DType::Q4M:
    return nkRange<DType::Q4M>(a, n0, n1);
  case DType::F8E4M3:
    return nkRange<DType::F8E4M3>(a, n0, n1);
  default:
    return;
  }
}

} // namespace

const QuantLinearKernels &genericQuantLinearKernels() {
  static const QuantLinearKernels set{nkGeneric, "generic"};
  return set;
}

const QuantLinearKernels &bestQuantLinearKernels() {
  static const QuantLinearKernels *best = [] {
    // INGOT_GEMM_ISA caps this as it caps the f32 kernels.
    if (bestGemmIsa() != GemmIsa::Generic && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
      return &avx2QuantLinearKernels();
    return &genericQuantLinearKernels();
  }();
  return *best;
}

} // namespace ingot::cpu
