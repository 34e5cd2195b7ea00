//===- EngineImpl.h - The engine's state, shared by its two halves -*- C++ -*-===//
//
// Engine.cpp holds the public side (create, submit, cancel, stats: what
// other threads call), EngineLoop.cpp the step thread (scheduling, the
// executor, sampling and the token events). Both see this state; the
// fields under `mu` are the only ones the other threads touch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Engine.h"

#include "engine/KvBlockManager.h"
#include "engine/Scheduler.h"
#include "engine/TextStream.h"
#include "ingot/Executor.h"
#include "ingot/GpuExecutor.h"
#include "ingot/KvCache.h"
#include "ingot/ThreadPool.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ingot {

using EngineClock = std::chrono::steady_clock;

/// One submitted request, owned by the step thread once it left the inbox.
struct EngineRequest {
  uint64_t id = 0;
  RequestParams params;
  TokenCallback callback;
  std::vector<int32_t> prompt, generated, stopIds;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<engine::TextStream> text;
  EngineClock::time_point submitted;
  TokenEvent pendingLogprobs; // of the token being emitted, when asked for
};

struct Engine::Impl {
  Impl(const Artifact &artifact, unsigned threads)
      : artifact(artifact), config(artifact.manifest().llm), pool(threads),
        executor(artifact, pool) {}

  void loop();
  void step();
  /// Ok when output 0 holds float32 [>= rows, vocab_size] logits.
  Status checkLogits(const std::vector<NamedTensor> &outputs,
                     size_t rows) const;
  void emit(EngineRequest &r, TokenEvent e);
  void finish(uint64_t id, int32_t token, std::string text,
              const std::string &reason, const std::string &error = "");
  void onToken(EngineRequest &r, int32_t token);
  void publishStats();
  void trackKvPeak(const std::vector<engine::ScheduledChunk> &plan);
  void labelStep(const std::vector<engine::ScheduledChunk> &plan);
  /// Samples every row of `plan` that samples, then delivers the tokens.
  void sampleRows(const std::vector<engine::ScheduledChunk> &plan,
                  const float *rows);
  /// step(), with an exception (std::bad_alloc in a kernel, say) ending
  /// every request in flight with an error instead of the process.
  void guardedStep();
  /// Ends the requests whose callback threw (see emit) with an error.
  void finishBrokenCallbacks();

  const Artifact &artifact;
  LlmConfig config;
  ThreadPool pool;
  Executor executor;
  KvCacheStorage kv;                // CPU only
  std::unique_ptr<GpuExecutor> gpu; // steps and KV cache on a GPU
  std::string deviceNote;
  std::unique_ptr<engine::KvBlockManager> blocks;
  std::unique_ptr<engine::Scheduler> scheduler;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<int32_t> eosIds;
  int64_t context = 0;
  StepProfiler *profiler = nullptr;

  // Shared with submitting threads, under `mu`.
  mutable std::mutex mu;
  std::condition_variable wake, idle;
  std::vector<std::unique_ptr<EngineRequest>> inbox;
  std::vector<uint64_t> cancels;
  uint64_t nextId = 1;
  int64_t active = 0; // submitted, final event not yet delivered
  bool stopping = false;
  EngineStats shared;

  // Owned by the step thread.
  std::unordered_map<uint64_t, std::unique_ptr<EngineRequest>> requests;
  /// Requests whose callback threw, with what it threw.
  std::vector<std::pair<uint64_t, std::string>> brokenCallbacks;
  EngineStats local;
  // Kept across steps so that a step's logits reuse the last one's memory
  // (no page faults or zero fill of vocab-sized rows per step).
  std::vector<NamedTensor> stepOutputs;
  std::vector<EngineRequest *> stepRequests;
  std::vector<int32_t> stepTokens;
  std::thread thread;
};


} // namespace ingot
