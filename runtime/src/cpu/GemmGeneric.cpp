//===- GemmGeneric.cpp - Portable GEMM micro-kernels ----------------------===//
//
// Plain loops the compiler vectorises for the baseline ISA: the fallback on
// CPUs without AVX2, and the reference the ISA kernels are tested against.
// A is always packed here (no in-place-A kernel).
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"

#include <algorithm>

namespace ingot::cpu {
namespace {

constexpr int kGenericMr = 4, kGenericNr = 8;

void genericMicro(int64_t kc, const float *ap, const float *bp, float *c,
                  int64_t ldc, int64_t mr, int64_t nr, float alpha,
                  float beta) {
  float acc[kGenericMr * kGenericNr] = {};
  for (int64_t kk = 0; kk < kc; ++kk)
    for (int r = 0; r < kGenericMr; ++r)
      for (int j = 0; j < kGenericNr; ++j)
        acc[r * kGenericNr + j] +=
            ap[kk * kGenericMr + r] * bp[kk * kGenericNr + j];
  storeTile(acc, kGenericNr, c, ldc, mr, nr, alpha, beta);
}

void genericSmallM(int64_t m, int64_t k, int64_t nn, const float *a,
                   int64_t aRowStride, int64_t aColStride, const float *b,
                   int64_t ldb, float *c, int64_t ldc, float alpha,
                   float beta) {
  alignas(64) float acc[kSmallM][kSmallMWidth];
  for (int64_t r = 0; r < m; ++r)
    std::fill(acc[r], acc[r] + nn, 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) {
    const float *brow = b + kk * ldb;
    for (int64_t r = 0; r < m; ++r) {
      const float av = a[r * aRowStride + kk * aColStride];
      for (int64_t j = 0; j < nn; ++j)
        acc[r][j] += av * brow[j];
    }
  }
  for (int64_t r = 0; r < m; ++r)
    storeTile(acc[r], 0, c + r * ldc, ldc, 1, nn, alpha, beta);
}

float genericDot(int64_t k, const float *x, const float *y) {
  float s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= k; i += 8)
    for (int j = 0; j < 8; ++j)
      s[j] += x[i + j] * y[i + j];
  float t = 0;
  for (; i < k; ++i)
    t += x[i] * y[i];
  return t + ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

} // namespace

void storeTile(const float *acc, int64_t nrFull, float *c, int64_t ldc,
               int64_t mr, int64_t nr, float alpha, float beta) {
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t j = 0; j < nr; ++j) {
      float v = alpha * acc[r * nrFull + j];
      float &out = c[r * ldc + j];
      out = beta == 0.0f ? v : v + beta * out;
    }
}

const GemmKernelSet &genericGemmKernels() {
  static const GemmKernelSet set{kGenericMr, kGenericNr,    genericMicro,
                                 nullptr,    genericSmallM, genericDot};
  return set;
}

} // namespace ingot::cpu
