//===- Sampler.h - Next-token choice from logits ----------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ingot {

struct SamplingParams {
  double temperature = 0.0; // 0 = greedy
  int64_t topK = 0;         // 0 = off
  double topP = 1.0;        // 1 = off
  uint64_t seed = 0;
};

/// Picks tokens for one sequence. Greedy takes the first maximum; otherwise
/// logits are scaled by 1/temperature, cut to the top-k, then to the
/// smallest set whose probability reaches top-p, renormalised and sampled
/// with the sequence's own generator, so the same seed gives the same tokens
/// whatever else shares the batch.
class Sampler {
public:
  explicit Sampler(const SamplingParams &params);
  int32_t sample(const float *logits, int64_t vocab);

private:
  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;
};

} // namespace ingot
