//===- Engine.h - Continuous batching over the paged KV cache ---*- C++ -*-===//
//
// Serves many requests from one LLM artifact. Each step mixes the decode
// tokens of running sequences with prefill chunks of waiting ones (up to the
// step's token and sequence budgets), so a long prompt never stalls the
// others. KV memory is a fixed pool of blocks; when it runs out, the most
// recently admitted sequence is preempted (its blocks freed, its prefix
// recomputed later). Full blocks whose contents match (same tokens from the
// start of the sequence) are shared between sequences by reference count.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/Sampler.h"
#include "ingot/Status.h"
#include "ingot/Tokenizer.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ingot {

class StepProfiler;

struct EngineOptions {
  unsigned threads = 0;          // 0 = all cores
  int64_t kvBlocks = 0;          // KV budget in blocks; 0 = use kvCacheMb
  int64_t kvCacheMb = 0;         // KV budget in MiB; 0 = a fraction of free memory
  int64_t maxTokensPerStep = 0;  // 0 = the compiled bound
  int64_t maxSeqs = 0;           // 0 = the compiled bound
  bool prefixCaching = true;
  /// KV-cache element type: "auto" (the artifact's), "float32", "bfloat16"
  /// (alias "bf16"), "int8" or "fp8" (8-bit values with a scale per token
  /// and KV head, KvCache.h).
  std::string kvCacheDtype = "auto";
  /// Commit the whole KV budget at start (KvCacheStorage::allocate), as a
  /// long-running server wants: its memory is then flat from the first
  /// request. Off, pages are committed as blocks are first used, and with
  /// prefix caching (freed blocks stay cached) that grows toward the budget.
  bool kvPrefault = false;
  /// Times every step and kernel, labelled "prefill N" / "decode N" /
  /// "mixed P+D" (tokens); owned by the caller, must outlive the engine.
  StepProfiler *profiler = nullptr;
  /// Where steps run: "cpu", "cuda", "cuda:N" or "auto" (CUDA when the
  /// artifact's CUDA code covers its plan and a GPU is there, else the CPU).
  /// On a GPU the KV cache lives in device memory (f32), sized by kvBlocks
  /// or kvCacheMb, else by gpuMemoryFraction of the device's memory.
  std::string device = "auto";
  double gpuMemoryFraction = 0.9;
};

struct RequestParams {
  std::vector<int32_t> promptTokens; // used verbatim when non-empty
  std::string prompt;                // else encoded (BOS per the tokenizer)
  SamplingParams sampling;
  int64_t maxNewTokens = 256;
  std::vector<int32_t> stopTokenIds; // in addition to the model's EOS ids
  std::vector<std::string> stopStrings;
  bool ignoreEos = false;            // benchmarks: always run to maxNewTokens
  /// < 0: no log-probabilities. k >= 0: each token event carries the chosen
  /// token's log-probability and the k most likely tokens' (k <= 20), from
  /// the model's distribution before penalties and temperature, as OpenAI
  /// reports them.
  int32_t logprobs = -1;
};

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0;
};

/// One callback per generated token, and a last one with finished = true
/// (finishReason "stop", "length", "cancelled" or "error" with `error`).
struct TokenEvent {
  uint64_t requestId = 0;
  int32_t token = -1;  // -1 on the final event when no token comes with it
  std::string text;    // newly completed UTF-8 text
  bool finished = false;
  std::string finishReason;
  std::string error;
  double timeMs = 0;   // since the request was submitted
  bool hasLogprob = false; // RequestParams::logprobs >= 0 and token >= 0
  float logprob = 0;
  std::vector<TokenLogprob> topLogprobs; // most likely first
};
using TokenCallback = std::function<void(const TokenEvent &)>;

struct EngineStats {
  int64_t steps = 0;
  int64_t promptTokens = 0;
  int64_t generatedTokens = 0;
  int64_t preemptions = 0;
  int64_t prefixCacheQueries = 0; // full prompt blocks looked up
  int64_t prefixCacheHits = 0;    // of those, found already cached
  double prefixCacheHitRate = 0;
  int64_t kvBlocksTotal = 0;
  int64_t peakKvBlocksUsed = 0;
  // At the step start where held blocks were most: their token slots and
  // how many of them hold a token (the rest is unused space at the ends of
  // partly filled blocks; benchmarks report it as KV waste).
  int64_t peakKvSlotsHeld = 0;
  int64_t peakKvSlotsFilled = 0;
  int64_t kvBlocksUsed = 0;       // held by sequences now (cached idle excluded)
  int64_t blockSize = 0;
  int64_t finishedRequests = 0;
  int64_t failedRequests = 0;
  int64_t runningRequests = 0;    // admitted to the scheduler's running set
  int64_t waitingRequests = 0;    // queued in the scheduler, not yet running
  int64_t maxSeqs = 0;            // the resolved per-step sequence bound
};

class Engine {
public:
  /// Prints nothing; `describeBudget()` gives the "N blocks × B tokens = T
  /// tokens, M MiB" line.
  static Status create(const Artifact &artifact, const EngineOptions &options,
                       std::unique_ptr<Engine> *out);
  ~Engine(); // stops the step thread; unfinished requests end "cancelled"

  /// Thread-safe. A bad request (empty prompt, unknown token id, absurd
  /// parameter, prompt beyond the context) is rejected here with a clear
  /// error and never disturbs the others.
  Status submit(const RequestParams &request, TokenCallback callback,
                uint64_t *requestId);
  /// Thread-safe; frees the request's blocks at the next step boundary.
  void cancel(uint64_t requestId);
  /// Blocks until every submitted request has finished.
  void waitIdle();
  EngineStats stats() const;
  std::string describeBudget() const;
  /// "" on the CPU for an artifact without GPU code; else which device
  /// runs the steps, or why the CPU does ("running on cuda:0 (...)").
  const std::string &deviceNote() const;
  const Tokenizer &tokenizer() const;
  /// Tokens one sequence may hold, prompt and output together.
  int64_t contextLength() const;

private:
  Engine();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ingot
