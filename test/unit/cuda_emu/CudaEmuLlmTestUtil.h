//===- CudaEmuLlmTestUtil.h - Shared by the LLM kernel tests ----*- C++ -*-===//
//
// What CudaEmuLlmKernelsTest and CudaEmuLinearTest share: random inputs from a
// fixed seed, the test's own f32 -> bf16/f16 rounding (independent of the
// kernels' widening in prelude.cuh), and the relative-error measure.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "prelude.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace ingot_emu_test {

/// Values uniform in ±[0.05, 2]: never zero, so relative errors mean
/// something and a dropped term is visible.
class Rng {
public:
  explicit Rng(unsigned seed) : gen_(seed) {}
  std::vector<float> values(size_t n) {
    std::uniform_real_distribution<float> mag(0.05f, 2.0f);
    std::bernoulli_distribution neg(0.5);
    std::vector<float> v(n);
    for (float &x : v)
      x = neg(gen_) ? -mag(gen_) : mag(gen_);
    return v;
  }

private:
  std::mt19937 gen_;
};

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// f32 -> bf16, round to nearest even (finite inputs).
inline uint16_t toBf16(float f) {
  const uint32_t u = bitsOf(f);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline double fromBf16(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// f32 -> f16, round to nearest even, for normal f16 results (the test's
/// values, |v| in [0.05, 2], all are).
inline uint16_t toF16(float f) {
  const uint32_t u = bitsOf(f);
  const int exp = int((u >> 23) & 0xffu) - 127 + 15;
  if (exp < 1 || exp > 30)
    throw std::runtime_error("toF16: outside the normal f16 range");
  const uint32_t man = u & 0x7fffffu;
  uint32_t h = (uint32_t(exp) << 10) | (man >> 13); // truncated
  const uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h; // a carry into the exponent is still correct
  return uint16_t(((u >> 16) & 0x8000u) | h);
}
inline double fromF16(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  const double v =
      exp ? std::ldexp(1024 + man, exp - 25) : std::ldexp(double(man), -24);
  return (h & 0x8000) ? -v : v;
}

/// A weight vector stored as W (float, Bf16 or F16) and the exact values
/// it holds, as doubles, for the reference.
template <typename W> struct Weights {
  explicit Weights(const std::vector<float> &v) {
    for (float f : v) {
      if constexpr (std::is_same_v<W, float>) {
        data.push_back(f);
        ref.push_back(f);
      } else if constexpr (std::is_same_v<W, ingot_k::Bf16>) {
        data.push_back(W{toBf16(f)});
        ref.push_back(fromBf16(data.back().bits));
      } else {
        data.push_back(W{toF16(f)});
        ref.push_back(fromF16(data.back().bits));
      }
    }
  }
  std::vector<W> data;
  std::vector<double> ref;
};

/// max_i |got[i] - ref[i]| / max(|ref[i]|, floor); NaN counts as infinite.
inline double maxRelErr(const float *got, const std::vector<double> &ref,
                        double floor) {
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e =
        std::abs(got[i] - ref[i]) / std::max(std::abs(ref[i]), floor);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

} // namespace ingot_emu_test
