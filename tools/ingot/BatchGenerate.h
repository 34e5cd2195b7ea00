//===- BatchGenerate.h - `ingot generate` arguments, batch mode -*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::cli {

/// The parsed command line of `ingot generate`. Sampling values < 0 mean
/// "not given": the model's generation_config.json defaults apply (in batch
/// mode they are the defaults of every line that leaves the key out).
struct GenerateArgs {
  std::string artifact, prompt, logitsOut;
  std::string profile; // --profile: Chrome trace file, top kernels on stderr
  std::vector<int32_t> promptTokens;
  bool hasPrompt = false, hasTokens = false, chat = false, json = false;
  int64_t maxNewTokens = -1, topK = -1, seed = 0, threads = 0, kvBlocks = 0;
  double temperature = -1, topP = -1;
  // Batch mode (--batch-file).
  std::string batchFile, output, statsJson;
  int64_t kvCacheMb = 0, blockSize = 0, maxTokensPerStep = 0, maxSeqs = 0;
  std::string kvCacheDtype = "auto";
  bool prefixCaching = true;
};

/// Serves every line of --batch-file through one Engine and writes
/// --output; returns the process exit code.
int batchGenerateMain(const GenerateArgs &args);

} // namespace ingot::cli
