//===- EngineSupport.h - The engine's model-free helpers --------*- C++ -*-===//
//
// Budget arithmetic, request validation and step assembly, kept apart from
// the step thread so that each is testable without a model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "engine/KvBlockManager.h"
#include "engine/Scheduler.h"
#include "ingot/Engine.h"
#include "ingot/Generator.h"
#include "ingot/Manifest.h"
#include "ingot/Sampler.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::engine {

struct StepLimits {
  int64_t kvBlocks = 0;
  int64_t maxTokensPerStep = 0;
  int64_t maxSeqs = 0;
};

/// The step budgets (options capped by the compiled bounds) and the KV
/// budget: kvBlocks, else kvCacheMb, else a quarter of MemAvailable (capped
/// at what maxSeqs full-context sequences could use, and never fewer blocks
/// than one full-context sequence needs). An explicit budget is kept as
/// given (at least one block).
Status resolveLimits(const LlmConfig &config, const EngineOptions &options,
                     StepLimits *limits);

/// Fails, naming the sizes, when `kvBlocks` blocks of KV cache and the
/// activation arena need more than the machine's physical memory: both are
/// committed lazily and would be OOM-killed mid-run instead.
Status checkMemoryBudget(const LlmConfig &config, int64_t kvBlocks,
                         uint64_t arenaBytes);

/// "N blocks × B tokens = T tokens, M MiB".
std::string describeBudget(const LlmConfig &config, int64_t kvBlocks);

/// Checks a request whose prompt ids are `prompt`; the error names the
/// offending field and value.
Status validateRequest(const RequestParams &request,
                       const std::vector<int32_t> &prompt,
                       const LlmConfig &config);

/// The step inputs for a plan; row i of the logits belongs to plan[i].
StepBatch buildStep(const Scheduler &scheduler, const KvBlockManager &blocks,
                    const std::vector<ScheduledChunk> &plan);

/// KV slots that hold a token once `plan` has run, of all the blocks held.
int64_t filledKvSlots(const Scheduler &scheduler, const KvBlockManager &blocks,
                      const std::vector<ScheduledChunk> &plan);

/// Fills `event`'s log-probability of `token` and its `k` most likely
/// alternatives (ties broken by the lower id) from one logits row.
void fillLogprobs(const float *logits, int64_t vocab, int32_t token, int32_t k,
                  TokenEvent *event);

/// Calls the sampler with the request's history when its interface takes
/// it (penalties), else with the logits alone.
template <typename S>
int32_t sampleNext(S &sampler, const float *logits, int64_t vocab,
                   const std::vector<int32_t> &prompt,
                   const std::vector<int32_t> &generated) {
  if constexpr (requires { sampler.sample(logits, vocab, prompt, generated); })
    return sampler.sample(logits, vocab, prompt, generated);
  else
    return sampler.sample(logits, vocab);
}

} // namespace ingot::engine
