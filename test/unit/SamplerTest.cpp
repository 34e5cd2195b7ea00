//===- SamplerTest.cpp - Every sampling option against a reference --------===//
//
// The reference below is written from the definitions (HF repetition
// penalty, OpenAI presence/frequency penalties, temperature, top-k, top-p,
// min-p), not from Sampler.cpp: penalties are compared exactly on the
// transformed logits and through greedy picks; the filters give an exact
// distribution in double that the empirical frequencies of many seeded draws
// must match within a few standard deviations (the seeds are fixed, so the
// tests are deterministic; the bound only has to be honest, not tight).
//
//===----------------------------------------------------------------------===//

#include "ingot/Sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

using namespace ingot;

namespace {

std::vector<float> referencePenalties(std::vector<float> logits,
                                      const SamplingParams &p,
                                      const std::vector<int32_t> &prompt,
                                      const std::vector<int32_t> &generated) {
  for (size_t id = 0; id < logits.size(); ++id) {
    auto occurs = [&](const std::vector<int32_t> &v) {
      return std::count(v.begin(), v.end(), int32_t(id));
    };
    double x = logits[id];
    if (occurs(prompt) + occurs(generated) > 0)
      x = float(x > 0 ? x / p.repetitionPenalty : x * p.repetitionPenalty);
    int64_t count = occurs(generated);
    if (count > 0)
      x = x - p.frequencyPenalty * double(count) - p.presencePenalty;
    logits[id] = float(x);
  }
  return logits;
}

size_t argmax(const std::vector<float> &v) {
  return std::max_element(v.begin(), v.end()) - v.begin(); // first maximum
}

/// The exact distribution the filters leave (penalties not applied).
std::vector<double> referenceDistribution(const std::vector<float> &logits,
                                          const SamplingParams &p) {
  size_t n = logits.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return logits[a] > logits[b]; // stable: ties keep the lower id first
  });
  double top = logits[order[0]];
  std::vector<double> w(n, 0.0);
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(logits[i]))
      w[i] = std::exp((logits[i] - top) / p.temperature);
  if (p.topK > 0)
    for (size_t rank = size_t(p.topK); rank < n; ++rank)
      w[order[rank]] = 0;
  if (p.topP < 1) {
    double z = std::accumulate(w.begin(), w.end(), 0.0), cumulative = 0;
    bool reached = false;
    for (size_t i : order) {
      if (reached)
        w[i] = 0;
      cumulative += w[i] / z;
      reached = reached || cumulative >= p.topP;
    }
  }
  if (p.minP > 0) {
    double largest = *std::max_element(w.begin(), w.end());
    for (double &x : w)
      if (x < p.minP * largest)
        x = 0;
  }
  double z = std::accumulate(w.begin(), w.end(), 0.0);
  for (double &x : w)
    x /= z;
  return w;
}

/// Draws `draws` tokens with one sampler and checks each token's frequency
/// against `expected`: never a zero-probability token, every deviation
/// within 5 standard deviations, and a chi-square well under its tail.
void expectDistribution(const std::vector<float> &logits,
                        const SamplingParams &p,
                        const std::vector<double> &expected,
                        int draws = 40000) {
  Sampler s(p);
  std::vector<int64_t> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) {
    int32_t t = s.sample(logits.data(), int64_t(logits.size()), {}, {});
    ASSERT_GE(t, 0);
    ASSERT_LT(size_t(t), logits.size());
    ++counts[t];
  }
  double chi2 = 0;
  int cells = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    double e = expected[i];
    if (e == 0) {
      EXPECT_EQ(counts[i], 0) << "token " << i << " must be filtered out";
      continue;
    }
    double freq = double(counts[i]) / draws;
    double sigma = std::sqrt(e * (1 - e) / draws);
    EXPECT_LE(std::abs(freq - e), 5 * sigma + 1e-12)
        << "token " << i << ": frequency " << freq << ", expected " << e;
    chi2 += (counts[i] - e * draws) * (counts[i] - e * draws) / (e * draws);
    ++cells;
  }
  // df = cells - 1; mean df, sd sqrt(2 df): 6 sd above is far in the tail.
  double df = std::max(1, cells - 1);
  EXPECT_LT(chi2, df + 6 * std::sqrt(2 * df)) << "chi-square " << chi2;
}

const std::vector<float> kLogits = {2.0f, 1.5f,  1.5f, 0.3f, -0.7f,     3.1f,
                                    0.0f, -2.0f, 1.0f, 2.6f, -INFINITY, 0.9f};

SamplingParams withTemperature(double t) {
  SamplingParams p;
  p.temperature = t;
  p.seed = 1234;
  return p;
}

TEST(Sampler, GreedyTakesTheFirstMaximum) {
  Sampler s(SamplingParams{});
  EXPECT_EQ(s.sample(kLogits.data(), kLogits.size(), {}, {}), 5);
  std::vector<float> equal(7, 0.25f);
  EXPECT_EQ(s.sample(equal.data(), equal.size(), {}, {}), 0);
  std::vector<float> tie = {0.f, 4.f, 1.f, 4.f};
  EXPECT_EQ(s.sample(tie.data(), tie.size(), {}, {}), 1);
}

TEST(Sampler, FirstMaximumMatchesAScanOnRandomRows) {
  // The reference is the plain scan: the first i with l[i] > every earlier
  // value, NaN never taken. Rows of odd lengths (the lanes' remainder),
  // duplicated maxima, NaNs and infinities anywhere.
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 3.f);
  for (int64_t n : {1, 2, 15, 16, 17, 33, 1000, 49152}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> row(static_cast<size_t>(n));
      for (float &x : row)
        x = std::round(normal(rng)); // many ties
      for (int k = 0; k < trial % 4; ++k)
        row[rng() % n] = k % 2 ? NAN : -INFINITY;
      int64_t want = -1;
      for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(row[i]) && (want < 0 || row[i] > row[want]))
          want = i;
      EXPECT_EQ(Sampler::firstMaximum(row.data(), n),
                std::max<int64_t>(want, 0))
          << "n " << n << " trial " << trial;
    }
  }
  std::vector<float> nanFirst = {NAN, 1.f, 3.f, 3.f};
  EXPECT_EQ(Sampler::firstMaximum(nanFirst.data(), 4), 2);
  std::vector<float> zeros = {-0.f, 0.f};
  EXPECT_EQ(Sampler::firstMaximum(zeros.data(), 2), 0);
  std::vector<float> allNan(5, NAN);
  EXPECT_EQ(Sampler::firstMaximum(allNan.data(), 5), 0);
  std::vector<float> big(40, -1.f);
  big[37] = INFINITY;
  EXPECT_EQ(Sampler::firstMaximum(big.data(), 40), 37);
}

TEST(Sampler, PenaltiesMatchTheReferenceExactly) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 2.f);
  std::uniform_int_distribution<int32_t> id(-3, 52); // some out of range
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<float> logits(50);
    for (float &x : logits)
      x = normal(rng);
    std::vector<int32_t> prompt(rng() % 20), generated(rng() % 30);
    for (int32_t &t : prompt)
      t = id(rng);
    for (int32_t &t : generated)
      t = id(rng) % 12; // repeats, so counts exceed 1
    SamplingParams p;
    p.repetitionPenalty = trial % 3 ? 0.5 + (rng() % 200) / 100.0 : 1.0;
    p.presencePenalty = trial % 5 ? (int(rng() % 400) - 200) / 100.0 : 0.0;
    p.frequencyPenalty = trial % 7 ? (int(rng() % 400) - 200) / 100.0 : 0.0;
    std::vector<float> expected =
        referencePenalties(logits, p, prompt, generated);
    std::vector<float> actual = logits;
    Sampler::applyPenalties(p, actual.data(), actual.size(), prompt, generated);
    ASSERT_EQ(actual, expected) << "trial " << trial;
    // sample() with temperature 0 is the argmax after the same penalties.
    Sampler s(p);
    EXPECT_EQ(size_t(s.sample(logits.data(), logits.size(), prompt, generated)),
              argmax(expected))
        << "trial " << trial;
  }
}

TEST(Sampler, EachPenaltyChangesTheGreedyPick) {
  const std::vector<float> l = {1.0f, 2.0f, 1.9f, -0.5f, -0.4f, 0.5f};
  auto pick = [&](SamplingParams p, std::vector<int32_t> prompt,
                  std::vector<int32_t> generated) {
    return Sampler(p).sample(l.data(), l.size(), prompt, generated);
  };
  SamplingParams none;
  EXPECT_EQ(pick(none, {1}, {1, 1}), 1);
  SamplingParams rep;
  rep.repetitionPenalty = 1.2; // 2.0 / 1.2 = 1.67 < 1.9
  EXPECT_EQ(pick(rep, {1}, {}), 2);
  EXPECT_EQ(pick(rep, {}, {1}), 2); // output tokens count too
  rep.repetitionPenalty = 0.5;      // < 1 rewards repeats: -0.5 * 0.5
  const std::vector<float> neg = {-1.0f, -0.5f, -0.3f};
  EXPECT_EQ(Sampler(rep).sample(neg.data(), 3, {1}, {}), 1);
  SamplingParams presence;
  presence.presencePenalty = 0.2; // 2.0 - 0.2 < 1.9, whatever the count
  EXPECT_EQ(pick(presence, {}, {1}), 2);
  EXPECT_EQ(pick(presence, {1}, {}), 1); // the prompt does not count
  SamplingParams freq;
  freq.frequencyPenalty = 0.06; // 2.0 - 0.06 * 1 > 1.9, - 0.06 * 2 < 1.9
  EXPECT_EQ(pick(freq, {}, {1}), 1);
  EXPECT_EQ(pick(freq, {}, {1, 1}), 2);
}

TEST(Sampler, TemperatureMatchesSoftmax) {
  for (double t : {0.5, 1.0, 1.7})
    expectDistribution(kLogits, withTemperature(t),
                       referenceDistribution(kLogits, withTemperature(t)));
}

TEST(Sampler, TopK) {
  for (int64_t k : {1, 3, 5}) {
    SamplingParams p = withTemperature(0.9);
    p.topK = k;
    expectDistribution(kLogits, p, referenceDistribution(kLogits, p));
  }
}

TEST(Sampler, TopP) {
  for (double topP : {0.3, 0.62, 0.9}) {
    SamplingParams p = withTemperature(1.1);
    p.topP = topP;
    expectDistribution(kLogits, p, referenceDistribution(kLogits, p));
  }
}

TEST(Sampler, MinP) {
  for (double minP : {0.05, 0.3, 0.8}) {
    SamplingParams p = withTemperature(1.0);
    p.minP = minP;
    expectDistribution(kLogits, p, referenceDistribution(kLogits, p));
  }
}

TEST(Sampler, FiltersCombineInOrder) {
  SamplingParams p = withTemperature(0.8);
  p.topK = 6;
  p.topP = 0.9;
  p.minP = 0.1;
  expectDistribution(kLogits, p, referenceDistribution(kLogits, p));
}

TEST(Sampler, PenaltiesApplyBeforeTheFilters) {
  SamplingParams p = withTemperature(0.7);
  p.topP = 0.8;
  p.repetitionPenalty = 1.3;
  p.frequencyPenalty = 0.4;
  std::vector<int32_t> prompt = {5, 9}, generated = {5, 0, 0};
  std::vector<double> expected = referenceDistribution(
      referencePenalties(kLogits, p, prompt, generated), p);
  Sampler s(p);
  std::vector<int64_t> counts(kLogits.size(), 0);
  const int draws = 40000;
  for (int i = 0; i < draws; ++i)
    ++counts[s.sample(kLogits.data(), kLogits.size(), prompt, generated)];
  for (size_t i = 0; i < kLogits.size(); ++i) {
    double e = expected[i];
    double sigma = std::sqrt(e * (1 - e) / draws);
    EXPECT_LE(std::abs(double(counts[i]) / draws - e), 5 * sigma + 1e-12)
        << "token " << i;
  }
}

std::vector<int32_t> drawMany(const SamplingParams &p,
                              const std::vector<float> &logits, int n) {
  Sampler s(p);
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i)
    out.push_back(s.sample(logits.data(), logits.size(), {}, out));
  return out;
}

TEST(Sampler, SameSeedSameTokens) {
  SamplingParams p = withTemperature(1.0);
  p.topK = 8;
  p.topP = 0.95;
  p.presencePenalty = 0.3;
  EXPECT_EQ(drawMany(p, kLogits, 200), drawMany(p, kLogits, 200));
  SamplingParams other = p;
  other.seed = p.seed + 1;
  EXPECT_NE(drawMany(p, kLogits, 200), drawMany(other, kLogits, 200));
  // Interleaving two requests' samplers (as a batch does) changes neither.
  Sampler a(p), b(other);
  std::vector<int32_t> ga, gb;
  for (int i = 0; i < 200; ++i) {
    ga.push_back(a.sample(kLogits.data(), kLogits.size(), {}, ga));
    gb.push_back(b.sample(kLogits.data(), kLogits.size(), {}, gb));
  }
  EXPECT_EQ(ga, drawMany(p, kLogits, 200));
  EXPECT_EQ(gb, drawMany(other, kLogits, 200));
}

TEST(Sampler, EdgeCases) {
  SamplingParams off = withTemperature(0.9);
  SamplingParams bigK = off;
  bigK.topK = 1000; // > vocab: no cut, the very same draws
  EXPECT_EQ(drawMany(bigK, kLogits, 300), drawMany(off, kLogits, 300));
  SamplingParams fullP = off;
  fullP.topP = 1.0;
  EXPECT_EQ(drawMany(fullP, kLogits, 300), drawMany(off, kLogits, 300));

  std::vector<float> equal(8, 1.5f);
  SamplingParams uniform = withTemperature(1.0);
  expectDistribution(equal, uniform, std::vector<double>(8, 1.0 / 8));
  SamplingParams k3 = uniform; // ties: the lowest ids survive
  k3.topK = 3;
  expectDistribution(equal, k3, {1. / 3, 1. / 3, 1. / 3, 0, 0, 0, 0, 0});
  SamplingParams half = uniform;
  half.topP = 0.5;
  expectDistribution(equal, half, {.25, .25, .25, .25, 0, 0, 0, 0});

  // Cuts that would leave nothing keep the most likely token.
  SamplingParams tinyP = withTemperature(1.0);
  tinyP.topP = 1e-9;
  for (int32_t t : drawMany(tinyP, kLogits, 50))
    EXPECT_EQ(t, 5);
  SamplingParams bigMinP = withTemperature(1.0);
  bigMinP.minP = 1.0;
  for (int32_t t : drawMany(bigMinP, kLogits, 50))
    EXPECT_EQ(t, 5);

  // One token, and masked logits.
  float one = 0.f;
  EXPECT_EQ(Sampler(uniform).sample(&one, 1, {}, {}), 0);
  std::vector<float> masked = {-INFINITY, 0.f, -INFINITY};
  for (int32_t t : drawMany(uniform, masked, 50))
    EXPECT_EQ(t, 1);
}

} // namespace
