//===- CudaEmuTestUtil.h - Shared by the CUDA emulation tests ---*- C++ -*-===//
//
// Random inputs, a norm-wise relative error, and a float64 rotary embedding
// written from runtime/src/cpu/Rope.cpp and RopeMath.h (not calling them),
// for the tests that run codegen/kernels/cuda templates on the host.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "rope.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ingot_test {

inline float nanF() { return std::numeric_limits<float>::quiet_NaN(); }

/// n values uniform in [-1, 1], none within 1e-3 of zero.
inline std::vector<float> randomFloats(int64_t n, std::mt19937 &gen) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(size_t(n), 0.f);
  for (float &x : v)
    do
      x = dist(gen);
    while (std::fabs(x) < 1e-3f);
  return v;
}

/// max |got - want| / max |want|; infinity when got has a NaN (an
/// unwritten output, or a read of a cache slot never written).
inline double relError(const std::vector<float> &got,
                       const std::vector<double> &want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]))
      return std::numeric_limits<double>::infinity();
    err = std::max(err, std::fabs(double(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return err / scale;
}

inline ingot_k::RopeParams ropeNone(double theta) {
  return {0, theta, 1.0, 1.0, 4.0, 8192.0};
}
/// Llama 3.1's scaling.
inline ingot_k::RopeParams ropeLlama3() {
  return {2, 500000.0, 8.0, 1.0, 4.0, 8192.0};
}

/// inv_freq[i] as ropeInverseFrequencies (Rope.cpp) computes it.
inline double refInvFreq(int i, int rotaryDim, const ingot_k::RopeParams &r) {
  constexpr double kPi = 3.14159265358979323846;
  double f = std::pow(r.theta, -2.0 * double(i) / double(rotaryDim));
  if (r.scaling == 1)
    f /= r.factor;
  if (r.scaling == 2) {
    const double wavelen = 2.0 * kPi / f, om = r.originalMaxPositions;
    if (wavelen > om / r.lowFreqFactor) {
      f /= r.factor;
    } else if (wavelen >= om / r.highFreqFactor) {
      const double smooth = (om / wavelen - r.lowFreqFactor) /
                            (r.highFreqFactor - r.lowFreqFactor);
      f = (1.0 - smooth) * f / r.factor + smooth * f;
    }
  }
  return f;
}

/// One head rotated in double: pairs (i, i + rotaryDim/2), the rest copied.
template <typename X>
void refRopeHead(const X *x, double *y, int64_t pos, int rotaryDim, int headDim,
                 const ingot_k::RopeParams &r) {
  const int half = rotaryDim / 2;
  for (int d = 0; d < headDim; ++d)
    y[d] = double(x[d]);
  for (int i = 0; i < half; ++i) {
    const double a = double(pos) * refInvFreq(i, rotaryDim, r);
    const double x1 = double(x[i]), x2 = double(x[i + half]);
    y[i] = x1 * std::cos(a) - x2 * std::sin(a);
    y[i + half] = x2 * std::cos(a) + x1 * std::sin(a);
  }
}

} // namespace ingot_test
