//===- Engine.cpp - Continuous batching over the paged KV cache -----------===//
//
// One step thread owns the executor, the KV cache, the scheduler and every
// running request; submit() and cancel() only hand work over through a
// mutex-protected inbox, so callbacks run on the step thread and never hold
// the engine's lock. Each request samples with its own Sampler (seeded per
// request) from its own logits row, so its tokens do not depend on what else
// shares the step.
//
//===----------------------------------------------------------------------===//
#include "ingot/Engine.h"

#include "engine/EngineSupport.h"
#include "engine/KvBlockManager.h"
#include "engine/Scheduler.h"
#include "engine/TextStream.h"
#include "ingot/Executor.h"
#include "ingot/Generator.h"
#include "ingot/KvCache.h"
#include "ingot/Profiler.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace ingot {
using engine::ScheduledChunk;
using Clock = std::chrono::steady_clock;

namespace {

struct Request {
  uint64_t id = 0;
  RequestParams params;
  TokenCallback callback;
  std::vector<int32_t> prompt, generated, stopIds;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<engine::TextStream> text;
  Clock::time_point submitted;
  TokenEvent pendingLogprobs; // of the token being emitted, when asked for
};

} // namespace

struct Engine::Impl {
  Impl(const Artifact &artifact, unsigned threads)
      : artifact(artifact), config(artifact.manifest().llm), pool(threads),
        executor(artifact, pool) {}

  void loop();
  void step();
  void emit(Request &r, TokenEvent e);
  void finish(uint64_t id, int32_t token, std::string text,
              const std::string &reason, const std::string &error = "");
  void onToken(Request &r, int32_t token);
  void publishStats();
  void trackKvPeak(const std::vector<ScheduledChunk> &plan);
  void labelStep(const std::vector<ScheduledChunk> &plan);

  const Artifact &artifact;
  LlmConfig config;
  ThreadPool pool;
  Executor executor;
  KvCacheStorage kv;
  std::unique_ptr<engine::KvBlockManager> blocks;
  std::unique_ptr<engine::Scheduler> scheduler;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<int32_t> eosIds;
  int64_t context = 0;
  StepProfiler *profiler = nullptr;

  // Shared with submitting threads, under `mu`.
  mutable std::mutex mu;
  std::condition_variable wake, idle;
  std::vector<std::unique_ptr<Request>> inbox;
  std::vector<uint64_t> cancels;
  uint64_t nextId = 1;
  int64_t active = 0; // submitted, final event not yet delivered
  bool stopping = false;
  EngineStats shared;

  // Owned by the step thread.
  std::unordered_map<uint64_t, std::unique_ptr<Request>> requests;
  EngineStats local;
  std::thread thread;
};

Engine::Engine() = default;

Engine::~Engine() {
  if (!impl_)
    return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

Status Engine::create(const Artifact &artifact, const EngineOptions &options,
                      std::unique_ptr<Engine> *out) {
  const Manifest &m = artifact.manifest();
  if (!m.hasLlm)
    return Status::error(artifact.path() +
                         ": not an LLM artifact (compiled from an ONNX graph)");
  std::unique_ptr<Engine> e(new Engine());
  e->impl_ = std::make_unique<Impl>(artifact, options.threads);
  Impl &im = *e->impl_;
  if (!parseKvCacheDtype(options.kvCacheDtype, im.config.kvDtype,
                         &im.config.kvDtype))
    return Status::error("KV-cache dtype '" + options.kvCacheDtype +
                         "' is not one of auto, float32, int8, fp8");
  const LlmConfig &c = im.config;
  engine::StepLimits limits;
  if (Status s = engine::resolveLimits(c, options, &limits); !s)
    return s;
  if (Status s = im.kv.allocate(c, limits.kvBlocks, options.kvPrefault); !s)
    return s;
  im.executor.setKvCache(&im.kv.view());
  im.executor.setProfiler(options.profiler);
  im.profiler = options.profiler;
  if (Status s = Tokenizer::create(m.tokenizer, &im.tokenizer); !s)
    return Status::error(artifact.path() + ": tokenizer: " + s.message());
  im.eosIds = m.generation.eosIds;
  if (im.eosIds.empty() && m.tokenizer.eosId >= 0)
    im.eosIds.push_back(m.tokenizer.eosId);
  im.context = engine::contextLength(c);
  im.blocks = std::make_unique<engine::KvBlockManager>(
      limits.kvBlocks, c.blockSize, options.prefixCaching);
  engine::SchedulerOptions so;
  so.maxTokensPerStep = limits.maxTokensPerStep;
  so.maxSeqs = limits.maxSeqs;
  so.maxBlocksPerSeq = c.maxBlocksPerSeq;
  im.scheduler = std::make_unique<engine::Scheduler>(*im.blocks, so);
  im.local.kvBlocksTotal = limits.kvBlocks;
  im.local.blockSize = c.blockSize;
  im.local.maxSeqs = limits.maxSeqs;
  im.shared = im.local;
  im.thread = std::thread([&im] { im.loop(); });
  *out = std::move(e);
  return Status::ok();
}

Status Engine::submit(const RequestParams &request, TokenCallback callback,
                      uint64_t *requestId) {
  Impl &im = *impl_;
  auto r = std::make_unique<Request>();
  r->params = request;
  r->prompt = request.promptTokens.empty()
                  ? im.tokenizer->encode(request.prompt, im.tokenizer->addBos())
                  : request.promptTokens;
  if (Status s = engine::validateRequest(request, r->prompt, im.config); !s)
    return s;
  r->callback = std::move(callback);
  r->stopIds = request.stopTokenIds;
  if (!request.ignoreEos)
    r->stopIds.insert(r->stopIds.end(), im.eosIds.begin(), im.eosIds.end());
  r->sampler = std::make_unique<Sampler>(request.sampling);
  r->text = std::make_unique<engine::TextStream>(request.stopStrings);
  r->submitted = Clock::now();
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (im.stopping)
      return Status::error("the engine is shutting down");
    r->id = im.nextId++;
    if (requestId)
      *requestId = r->id;
    ++im.active;
    im.inbox.push_back(std::move(r));
  }
  im.wake.notify_all();
  return Status::ok();
}

void Engine::cancel(uint64_t requestId) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->cancels.push_back(requestId);
  }
  impl_->wake.notify_all();
}

void Engine::waitIdle() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->idle.wait(lock, [&] { return impl_->active == 0; });
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->shared;
}

std::string Engine::describeBudget() const {
  return engine::describeBudget(impl_->config, impl_->local.kvBlocksTotal);
}

const Tokenizer &Engine::tokenizer() const { return *impl_->tokenizer; }

int64_t Engine::contextLength() const { return impl_->context; }

void Engine::Impl::emit(Request &r, TokenEvent e) {
  e.requestId = r.id;
  if (r.pendingLogprobs.hasLogprob && e.token >= 0) {
    e.hasLogprob = true;
    e.logprob = r.pendingLogprobs.logprob;
    e.topLogprobs = std::move(r.pendingLogprobs.topLogprobs);
    r.pendingLogprobs.hasLogprob = false;
  }
  e.timeMs =
      std::chrono::duration<double, std::milli>(Clock::now() - r.submitted)
          .count();
  if (r.callback)
    r.callback(e);
}

void Engine::Impl::finish(uint64_t id, int32_t token, std::string text,
                          const std::string &reason, const std::string &error) {
  auto it = requests.find(id);
  if (it == requests.end())
    return;
  std::unique_ptr<Request> r = std::move(it->second);
  requests.erase(it);
  scheduler->remove(id);
  TokenEvent e;
  e.token = token;
  e.text = std::move(text);
  e.finished = true;
  e.finishReason = reason;
  e.error = error;
  if (reason == "error")
    ++local.failedRequests;
  else
    ++local.finishedRequests;
  publishStats();
  emit(*r, std::move(e));
  {
    std::lock_guard<std::mutex> lock(mu);
    --active;
  }
  idle.notify_all();
}

void Engine::Impl::publishStats() {
  local.preemptions = scheduler->preemptions();
  local.prefixCacheQueries = blocks->prefixQueries();
  local.prefixCacheHits = blocks->prefixHits();
  local.prefixCacheHitRate =
      local.prefixCacheQueries
          ? double(local.prefixCacheHits) / double(local.prefixCacheQueries)
          : 0.0;
  local.peakKvBlocksUsed = blocks->peakUsed();
  local.kvBlocksUsed = blocks->numUsed();
  local.runningRequests = int64_t(scheduler->running().size());
  local.waitingRequests = int64_t(scheduler->waiting().size());
  std::lock_guard<std::mutex> lock(mu);
  shared = local;
}

void Engine::Impl::onToken(Request &r, int32_t token) {
  r.generated.push_back(token);
  ++local.generatedTokens;
  if (std::find(r.stopIds.begin(), r.stopIds.end(), token) != r.stopIds.end()) {
    // Like vLLM, a stop token is among the ids but not in the text.
    finish(r.id, token, r.text->flush(), "stop");
    return;
  }
  bool stopped = false;
  std::string text = r.text->push(tokenizer->tokenBytes(token), &stopped);
  if (stopped) {
    finish(r.id, token, std::move(text), "stop");
    return;
  }
  int64_t total = int64_t(r.prompt.size() + r.generated.size());
  if (int64_t(r.generated.size()) >= r.params.maxNewTokens ||
      total >= context) {
    finish(r.id, token, text + r.text->flush(), "length");
    return;
  }
  scheduler->appendToken(r.id, token);
  TokenEvent e;
  e.token = token;
  e.text = std::move(text);
  emit(r, std::move(e));
}

void Engine::Impl::step() {
  std::vector<uint64_t> failed;
  std::vector<ScheduledChunk> plan = scheduler->schedule(&failed);
  for (uint64_t id : failed)
    finish(id, -1, "", "error",
           "the request needs more KV-cache blocks than the " +
               std::to_string(blocks->numBlocks()) +
               " the engine has; raise the KV budget");
  if (plan.empty())
    return;
  trackKvPeak(plan);
  StepBatch batch = engine::buildStep(*scheduler, *blocks, plan);
  if (profiler)
    labelStep(plan);
  std::vector<NamedTensor> outputs;
  Status s = executor.run(batch.toTensors(), &outputs);
  ++local.steps;
  if (!s) {
    for (const ScheduledChunk &c : plan)
      finish(c.seq, -1, "", "error", "engine step failed: " + s.message());
    return;
  }
  scheduler->complete(plan);
  const HostTensor &logits = outputs.at(0).tensor;
  const float *rows = reinterpret_cast<const float *>(logits.data.data());
  int64_t vocab = config.vocabSize;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!plan[i].samples)
      continue;
    auto it = requests.find(plan[i].seq);
    if (it == requests.end())
      continue;
    Request &r = *it->second;
    const float *row = rows + i * vocab;
    int32_t token =
        engine::sampleNext(*r.sampler, row, vocab, r.prompt, r.generated);
    if (r.params.logprobs >= 0)
      engine::fillLogprobs(row, vocab, token, r.params.logprobs,
                           &r.pendingLogprobs);
    onToken(r, token);
  }
  publishStats();
}

void Engine::Impl::labelStep(const std::vector<ScheduledChunk> &plan) {
  // A decode chunk is one token past the prompt; anything else (prompt
  // chunks, recompute after preemption) is prefill work.
  int64_t prefill = 0, decode = 0;
  for (const ScheduledChunk &c : plan) {
    auto it = requests.find(c.seq);
    const bool isDecode = c.count == 1 && it != requests.end() &&
                          c.first >= int64_t(it->second->prompt.size());
    (isDecode ? decode : prefill) += c.count;
  }
  std::string label = !decode    ? "prefill " + std::to_string(prefill)
                      : !prefill ? "decode " + std::to_string(decode)
                                 : "mixed " + std::to_string(prefill) + "+" +
                                       std::to_string(decode);
  profiler->setNextRunLabel(std::move(label), prefill + decode);
}

void Engine::Impl::trackKvPeak(const std::vector<ScheduledChunk> &plan) {
  const int64_t held = blocks->numUsed() * config.blockSize;
  if (held <= local.peakKvSlotsHeld)
    return;
  local.peakKvSlotsHeld = held;
  local.peakKvSlotsFilled = engine::filledKvSlots(*scheduler, *blocks, plan);
}

void Engine::Impl::loop() {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    wake.wait(lock, [&] {
      return stopping || !inbox.empty() || !cancels.empty() ||
             !requests.empty();
    });
    if (stopping)
      break;
    std::vector<std::unique_ptr<Request>> arrived = std::move(inbox);
    std::vector<uint64_t> cancelled = std::move(cancels);
    inbox.clear();
    cancels.clear();
    lock.unlock();
    for (auto &r : arrived) {
      uint64_t id = r->id;
      local.promptTokens += int64_t(r->prompt.size());
      scheduler->add(id, r->prompt);
      requests.emplace(id, std::move(r));
      if (requests[id]->params.maxNewTokens == 0)
        finish(id, -1, "", "length");
    }
    for (uint64_t id : cancelled)
      finish(id, -1, "", "cancelled");
    if (!requests.empty())
      step();
    lock.lock();
  }
  // Shutting down: whatever is left ends "cancelled".
  std::vector<std::unique_ptr<Request>> arrived = std::move(inbox);
  lock.unlock();
  for (auto &r : arrived) {
    uint64_t id = r->id;
    scheduler->add(id, r->prompt);
    requests.emplace(id, std::move(r));
  }
  std::vector<uint64_t> left;
  for (const auto &[id, r] : requests)
    left.push_back(id);
  for (uint64_t id : left)
    finish(id, -1, "", "cancelled");
}

} // namespace ingot
