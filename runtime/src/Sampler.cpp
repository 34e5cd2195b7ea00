//===- Sampler.cpp - Next-token choice from logits ------------------------===//
#include "ingot/Sampler.h"

#include <algorithm>
#include <cmath>

namespace ingot {

Sampler::Sampler(const SamplingParams &params)
    : params_(params), rng_(params.seed) {}

int32_t Sampler::sample(const float *logits, int64_t vocab) {
  if (params_.temperature <= 0.0) {
    int32_t best = 0;
    for (int64_t i = 1; i < vocab; ++i)
      if (logits[i] > logits[best])
        best = static_cast<int32_t>(i);
    return best;
  }
  candidates_.clear();
  for (int64_t i = 0; i < vocab; ++i)
    candidates_.emplace_back(logits[i], static_cast<int32_t>(i));
  auto byLogit = [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  size_t keep = candidates_.size();
  if (params_.topK > 0 && static_cast<size_t>(params_.topK) < keep) {
    keep = static_cast<size_t>(params_.topK);
    std::partial_sort(candidates_.begin(), candidates_.begin() + keep,
                      candidates_.end(), byLogit);
    candidates_.resize(keep);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), byLogit);
  }
  // Softmax in double over the survivors, scaled by the temperature.
  double maxLogit = candidates_.front().first, total = 0;
  std::vector<double> probs(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i) {
    probs[i] = std::exp((candidates_[i].first - maxLogit) / params_.temperature);
    total += probs[i];
  }
  if (params_.topP < 1.0) {
    double cumulative = 0;
    size_t cut = probs.size();
    for (size_t i = 0; i < probs.size(); ++i) {
      cumulative += probs[i] / total;
      if (cumulative >= params_.topP) {
        cut = i + 1;
        break;
      }
    }
    probs.resize(cut);
    total = 0;
    for (double p : probs)
      total += p;
  }
  double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
  for (size_t i = 0; i < probs.size(); ++i) {
    r -= probs[i];
    if (r < 0)
      return candidates_[i].second;
  }
  return candidates_[probs.size() - 1].second;
}

} // namespace ingot
