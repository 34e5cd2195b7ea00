//===- Sampler.cpp - Next-token choice from logits ------------------------===//
#include "ingot/Sampler.h"

#include <algorithm>
#include <cmath>

namespace ingot {

Sampler::Sampler(const SamplingParams &params)
    : params_(params), rng_(params.seed) {}

int32_t Sampler::firstMaximum(const float *l, int64_t n) {
  // Two passes instead of one `l[i] > l[best]` scan, whose every step waits
  // on the last: the maximum over independent lanes (a vector reduction),
  // then the first index holding it. NaN never wins (`x > m` is false);
  // -0 and +0 tie, so the first of them wins, as in the scan.
  constexpr int kLanes = 16;
  float lane[kLanes];
  std::fill(lane, lane + kLanes, -INFINITY);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      lane[j] = l[i + j] > lane[j] ? l[i + j] : lane[j];
  float m = -INFINITY;
  for (int j = 0; j < kLanes; ++j)
    m = lane[j] > m ? lane[j] : m;
  for (; i < n; ++i)
    m = l[i] > m ? l[i] : m;
  for (i = 0; i < n; ++i)
    if (l[i] == m)
      return static_cast<int32_t>(i);
  return 0; // every logit NaN
}

double Sampler::uniform() { return double(rng_() >> 11) * 0x1.0p-53; }

void Sampler::applyPenalties(const SamplingParams &params, float *logits,
                             int64_t vocab, const std::vector<int32_t> &prompt,
                             const std::vector<int32_t> &generated) {
  auto inRange = [vocab](int32_t id) { return id >= 0 && id < vocab; };
  std::vector<int32_t> ids;
  if (params.repetitionPenalty != 1.0) {
    // Each distinct token once, however often it occurs (as in HF).
    for (const std::vector<int32_t> *list : {&prompt, &generated})
      for (int32_t id : *list)
        if (inRange(id))
          ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    double p = params.repetitionPenalty;
    for (int32_t id : ids) {
      double x = logits[id];
      logits[id] = static_cast<float>(x > 0 ? x / p : x * p);
    }
  }
  if (params.presencePenalty != 0.0 || params.frequencyPenalty != 0.0) {
    ids.clear();
    for (int32_t id : generated)
      if (inRange(id))
        ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (size_t i = 0; i < ids.size();) {
      size_t j = i;
      while (j < ids.size() && ids[j] == ids[i])
        ++j;
      double count = double(j - i);
      double x = logits[ids[i]];
      logits[ids[i]] = static_cast<float>(x - params.frequencyPenalty * count -
                                          params.presencePenalty);
      i = j;
    }
  }
}

int32_t Sampler::sample(const float *logits, int64_t vocab,
                        const std::vector<int32_t> &prompt,
                        const std::vector<int32_t> &generated) {
  if (vocab <= 0)
    return 0;
  const float *l = logits;
  if (params_.repetitionPenalty != 1.0 || params_.presencePenalty != 0.0 ||
      params_.frequencyPenalty != 0.0) {
    adjusted_.assign(logits, logits + vocab);
    applyPenalties(params_, adjusted_.data(), vocab, prompt, generated);
    l = adjusted_.data();
  }
  if (!(params_.temperature > 0.0))
    return firstMaximum(l, vocab);

  // Masked (-inf) and NaN logits can never be drawn.
  candidates_.clear();
  for (int64_t i = 0; i < vocab; ++i)
    if (l[i] > -INFINITY)
      candidates_.emplace_back(l[i], static_cast<int32_t>(i));
  if (candidates_.empty())
    return 0;
  auto byLogit = [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  size_t n = candidates_.size();
  bool cutTopK = params_.topK > 0 && static_cast<size_t>(params_.topK) < n;
  bool cutTopP = params_.topP < 1.0, cutMinP = params_.minP > 0.0;
  if (cutTopK) {
    n = static_cast<size_t>(params_.topK);
    std::partial_sort(candidates_.begin(), candidates_.begin() + n,
                      candidates_.end(), byLogit);
    candidates_.resize(n);
  } else if (cutTopP || cutMinP) {
    std::sort(candidates_.begin(), candidates_.end(), byLogit);
  }
  // Without a cut the walk below goes in id order; it needs no sort.
  float maxLogit = candidates_.front().first;
  for (const auto &c : candidates_)
    maxLogit = std::max(maxLogit, c.first);

  // Unnormalised probabilities in double: the cuts compare against the
  // running total instead of dividing by it.
  probs_.resize(n);
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    probs_[i] =
        std::exp(double(candidates_[i].first - maxLogit) / params_.temperature);
    total += probs_[i];
  }
  size_t keep = n;
  if (cutTopP) {
    double cumulative = 0, target = params_.topP * total;
    for (size_t i = 0; i < n; ++i) {
      cumulative += probs_[i];
      if (cumulative >= target) {
        keep = i + 1;
        break;
      }
    }
  }
  if (cutMinP) {
    // Sorted, so the kept tokens are a prefix; probs_[0] is the largest.
    double threshold = params_.minP * probs_[0];
    size_t m = 1;
    while (m < keep && probs_[m] >= threshold)
      ++m;
    keep = m;
  }
  if (keep != n) {
    total = 0;
    for (size_t i = 0; i < keep; ++i)
      total += probs_[i];
  }
  double r = uniform() * total;
  for (size_t i = 0; i < keep; ++i) {
    r -= probs_[i];
    if (r < 0)
      return candidates_[i].second;
  }
  return candidates_[keep - 1].second; // rounding left r at the very end
}

} // namespace ingot
