//===- BatchGenerate.h - `ingot generate` arguments, batch mode -*- C++ -*-===//
#pragma once

#include "CliNumbers.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ingot::cli {

/// The parsed command line of `ingot generate`. Sampling values < 0 (and an
/// unset topK) mean "not given": the model's generation_config.json
/// defaults apply (in batch mode they are the defaults of every line that
/// leaves the key out).
struct GenerateArgs {
  std::string artifact, prompt, logitsOut;
  std::string profile; // --profile: Chrome trace file, top kernels on stderr
  std::vector<int32_t> promptTokens;
  bool hasPrompt = false, hasTokens = false, chat = false, json = false;
  int64_t maxNewTokens = -1, seed = 0, threads = 0, kvBlocks = 0;
  std::optional<int64_t> topK;
  double temperature = -1, topP = -1;
  // Batch mode (--batch-file).
  std::string batchFile, output, statsJson;
  int64_t kvCacheMb = 0, blockSize = 0, maxTokensPerStep = 0, maxSeqs = 0;
  std::string kvCacheDtype = "auto";
  bool prefixCaching = true;
  std::string device = "auto";
  std::string weightsDir; // --weights DIR (external weights)
  double gpuMemoryFraction = 0.9;
};

/// An integer sampling setting: its flag, its batch-line key and the one
/// range both accept, so that the command line and a batch line never
/// disagree on what is valid.
struct SamplingIntRange {
  const char *flag, *key;
  int64_t min, max;
};
inline constexpr SamplingIntRange kMaxNewTokensRange{
    "--max-new-tokens", "max_new_tokens", 0, kInt32Max};
/// -1 and 0 both turn top-k off (-1 as in vLLM and `ingot serve`).
inline constexpr SamplingIntRange kTopKRange{"--top-k", "top_k", -1,
                                             kInt32Max};
inline constexpr SamplingIntRange kSeedRange{"--seed", "seed", 0, kInt64Max};

/// A top-k of kTopKRange as the engine takes it (0 = off).
inline int64_t topKForEngine(int64_t topK) { return topK < 0 ? 0 : topK; }

/// Serves every line of --batch-file through one Engine and writes
/// --output; returns the process exit code: 0 when at least one request
/// succeeded (the failed ones carry an "error" in their output line), 1
/// when every request failed or the batch could not run at all.
int batchGenerateMain(const GenerateArgs &args);

} // namespace ingot::cli
