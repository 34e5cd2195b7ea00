//===- Sampler.h - Next-token choice from logits ----------------*- C++ -*-===//
//
// One Sampler per sequence. The logits first get the penalties, in the order
// and with the semantics of the reference implementations users compare
// against:
//   repetition (Hugging Face): each distinct token of prompt + output has
//     its logit divided by the penalty when positive, multiplied when not;
//   frequency and presence (OpenAI): over the output only,
//     logit -= frequency * count + presence * [count > 0].
// Temperature 0 then takes the first maximum. Otherwise the logits are scaled
// by 1/temperature and cut, in order, to the top-k, to the smallest prefix
// whose probability (renormalised over the top-k) reaches top-p, and to the
// tokens whose probability is at least min-p times the largest; the
// survivors are renormalised and one is drawn with the sequence's own
// generator, seeded per request, so the same seed gives the same tokens
// whatever else shares the batch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace ingot {

struct SamplingParams {
  double temperature = 0.0;       // 0 = greedy
  int64_t topK = 0;               // 0 = off
  double topP = 1.0;              // 1 = off
  double minP = 0.0;              // 0 = off
  double repetitionPenalty = 1.0; // 1 = off (over prompt and output)
  double presencePenalty = 0.0;   // 0 = off (over output)
  double frequencyPenalty = 0.0;  // 0 = off (over output)
  uint64_t seed = 0;
};

class Sampler {
public:
  explicit Sampler(const SamplingParams &params);
  /// `prompt` and `generated` (the tokens so far) feed the penalties; ids
  /// outside [0, vocab) in them are ignored. Always returns an id in
  /// [0, vocab) for vocab > 0.
  int32_t sample(const float *logits, int64_t vocab,
                 const std::vector<int32_t> &prompt,
                 const std::vector<int32_t> &generated);

  /// Applies the penalties of `params` to `logits` in place (exposed so the
  /// tests can check them exactly).
  static void applyPenalties(const SamplingParams &params, float *logits,
                             int64_t vocab, const std::vector<int32_t> &prompt,
                             const std::vector<int32_t> &generated);

  /// The first index of the largest logit (NaN never is; 0 when all are
  /// NaN): the greedy pick.
  static int32_t firstMaximum(const float *logits, int64_t n);

private:
  /// A double in [0, 1) from the 53 high bits of one draw: unlike
  /// std::uniform_real_distribution, the same on every standard library.
  double uniform();

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<float> adjusted_;
  std::vector<int32_t> scratch_;
  std::vector<std::pair<float, int32_t>> candidates_;
  std::vector<double> probs_;
};

} // namespace ingot
