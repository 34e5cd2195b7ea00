//===- Generator.h - Text generation for one sequence -----------*- C++ -*-===//
//
// Runs an LLM artifact's step plan over one sequence: prefill in chunks of at
// most the compiled tokens-per-step, then one decode step per new token, with
// the sequence's K/V in paged blocks. The continuous-batching engine builds
// on the same step inputs (StepBatch) with many sequences per step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/GpuExecutor.h"
#include "ingot/KvCache.h"
#include "ingot/Sampler.h"
#include "ingot/Status.h"
#include "ingot/ThreadPool.h"
#include "ingot/Tokenizer.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ingot {

class StepProfiler;

/// The inputs of one engine step (compiler/hf/HfImporter.h): the tokens of
/// several sequences back to back, and how to find each one's KV blocks.
struct StepBatch {
  std::vector<int64_t> tokens, positions, slots;
  std::vector<int64_t> queryEnds, logitsIndices;
  std::vector<int32_t> blockTables; // [seqs, blocksPerSeq], -1 padded
  int64_t blocksPerSeq = 1;

  /// Appends `count` tokens of one sequence starting at `firstPosition`,
  /// whose blocks are `blocks`; its logits row is its last token's.
  void addSequence(const int32_t *ids, int64_t count, int64_t firstPosition,
                   const std::vector<int32_t> &blocks, int64_t blockSize);
  std::vector<NamedTensor> toTensors() const;
};

struct GenerateOptions {
  SamplingParams sampling;
  int64_t maxNewTokens = 256;
  /// Called with each new token and the complete UTF-8 text it finishes.
  std::function<void(int32_t token, const std::string &text)> onToken;
};

struct GenerateResult {
  std::vector<int32_t> tokens; // generated ids only
  std::string text;            // valid UTF-8 (U+FFFD for incomplete bytes)
  std::string finishReason;    // "stop" or "length"
  double ttftMs = 0;           // start to first token
  double tpotMs = 0;           // mean time per later token
  std::vector<float> promptLogits; // logits at the last prompt position
};

class Generator {
public:
  /// kvBlocks 0 = enough blocks for one full-context sequence;
  /// kvCacheDtype as EngineOptions::kvCacheDtype.
  static Status create(const Artifact &artifact, unsigned threads,
                       int64_t kvBlocks, std::unique_ptr<Generator> *out,
                       const std::string &kvCacheDtype = "auto");
  /// Moves the steps and the KV cache to the GPU `device` asks for
  /// (EngineOptions::device); before the first generate call. *note as
  /// Engine::deviceNote.
  Status useDevice(const std::string &device, std::string *note);
  ~Generator();

  Status generate(const std::vector<int32_t> &prompt,
                  const GenerateOptions &options, GenerateResult *result);
  const Tokenizer &tokenizer() const { return *tokenizer_; }
  const LlmConfig &config() const { return config_; }
  const KvCacheStorage &kvCache() const { return kv_; }
  /// Times every step ("prefill N" / "decode 1") and kernel; nullptr stops.
  /// Owned by the caller, must outlive the generate calls.
  void setProfiler(StepProfiler *profiler);

private:
  Generator(const Artifact &artifact, unsigned threads);
  /// Runs one step for the sequence's tokens [first, first + count).
  Status runStep(const std::vector<int32_t> &sequence, int64_t first,
                 int64_t count, std::vector<float> *logits);

  const Artifact &artifact_;
  LlmConfig config_;
  ThreadPool pool_;
  Executor executor_;
  KvCacheStorage kv_;
  std::unique_ptr<GpuExecutor> gpu_; // steps and KV cache on a GPU
  std::unique_ptr<KvBlockAllocator> blocks_;
  std::vector<int32_t> sequenceBlocks_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<int32_t> eosIds_;
  StepProfiler *profiler_ = nullptr;
  int64_t promptLength_ = 0; // of the current generate call, for labels
};

/// Splits `bytes` into the longest valid UTF-8 prefix (returned) and the
/// incomplete tail left in `bytes`; invalid bytes become U+FFFD.
std::string takeCompleteUtf8(std::string &bytes, bool final);

} // namespace ingot
