//===- LinearQuant.cpp - Portable quantised linear and the ISA choice -----===//
//
// The portable kernel performs an x86 kernel's operations one lane at a
// time (LinearQuant.h), for 8 or 16 lanes. It is the fallback for CPUs
// without AVX2 and the reference the x86 kernels are tested against
// bitwise.
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

/// The ISA kernels' lane reductions: 16 lanes fold in halves first.
template <int L> float reduceLanes(const float *v) {
  if constexpr (L == 8) {
    return reduceAdd8(v);
  } else {
    float h[8];
    for (int l = 0; l < 8; ++l)
      h[l] = v[l] + v[l + 8];
    return reduceAdd8(h);
  }
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

template <DType T, int L>
void nkRange(const QuantLinearArgs &a, int64_t n0, int64_t n1) {
  std::vector<float> w(size_t(a.k));
  for (int64_t j = n0; j < n1; ++j) {
    dequantRow<T>(a, j, w.data());
    for (int64_t r = a.row0; r < a.row0 + a.m; ++r) {
      const float *x = a.x + r * a.k;
      float lanes[L] = {}, tail = 0;
      for (int64_t k0 = 0; k0 < a.k; k0 += a.group) {
        const int64_t gs = std::min(a.group, a.k - k0), vec = gs / L * L;
        for (int64_t v = 0; v < vec; v += L)
          for (int l = 0; l < L; ++l)
            lanes[l] = std::fma(x[k0 + v + l], w[size_t(k0 + v + l)], lanes[l]);
        for (int64_t v = vec; v < gs; ++v)
          tail = std::fma(x[k0 + v], w[size_t(k0 + v)], tail);
      }
      const float s = reduceLanes<L>(lanes) + tail;
      a.y[(r - a.row0) * a.n + j] = a.bias ? s + a.bias[j] : s;
    }
  }
}

template <int L>
void nkGeneric(const QuantLinearArgs &a, int64_t n0, int64_t n1) {
  switch (a.wType) {
  case DType::Q8:
    return nkRange<DType::Q8, L>(a, n0, n1);
  case DType::Q4:
    return nkRange<DType::Q4, L>(a, n0, n1);
  case DType::Q4M:
    return nkRange<DType::Q4M, L>(a, n0, n1);
  case DType::F8E4M3:
    return nkRange<DType::F8E4M3, L>(a, n0, n1);
  default:
    return;
  }
}

} // namespace

const QuantLinearKernels &genericQuantLinearKernels(int lanes) {
  static const QuantLinearKernels set8{nkGeneric<8>, "generic", 8};
  static const QuantLinearKernels set16{nkGeneric<16>, "generic16", 16};
  return lanes == 16 ? set16 : set8;
}

GemmIsa bestQuantIsa() {
  static const GemmIsa best = [] {
    // INGOT_GEMM_ISA caps this as it caps the f32 kernels.
    const bool avx2 = __builtin_cpu_supports("avx2") &&
                      __builtin_cpu_supports("fma") &&
                      __builtin_cpu_supports("f16c");
    switch (bestGemmIsa()) {
    case GemmIsa::Avx512:
      if (avx2 && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512vl"))
        return GemmIsa::Avx512;
      [[fallthrough]];
    case GemmIsa::Avx2:
      if (avx2)
        return GemmIsa::Avx2;
      break;
    case GemmIsa::Generic:
      break;
    }
    return GemmIsa::Generic;
  }();
  return best;
}

const QuantLinearKernels &bestQuantLinearKernels() {
  switch (bestQuantIsa()) {
  case GemmIsa::Avx512:
    return avx512QuantLinearKernels();
  case GemmIsa::Avx2:
    return avx2QuantLinearKernels();
  case GemmIsa::Generic:
    break;
  }
  return genericQuantLinearKernels();
}

} // namespace ingot::cpu
