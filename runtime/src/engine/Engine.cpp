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
#include "engine/EngineImpl.h"

#include "engine/EngineSupport.h"

#include <new>
#include <system_error>

namespace ingot {

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

/// With a GPU (options.device), the executor and the KV cache in device
/// memory: an explicit budget (blocks or MiB) is kept, the default is what
/// fits in gpuMemoryFraction of the device, capped at what the scheduler
/// can use.
static Status openEngineGpu(const Artifact &artifact,
                            const EngineOptions &options, const LlmConfig &c,
                            std::unique_ptr<GpuExecutor> *gpu,
                            std::string *note, engine::StepLimits *limits) {
  DeviceRequest req;
  if (Status s = parseDeviceRequest(options.device, &req); !s)
    return s;
  if (!(options.gpuMemoryFraction > 0 && options.gpuMemoryFraction <= 1))
    return Status::error("the GPU memory fraction must be in (0, 1]");
  if (Status s = openGpuExecutor(artifact, req, gpu, note); !s)
    return s;
  if (!*gpu)
    return Status::ok();
  if (!options.kvBlocks && !options.kvCacheMb) {
    int64_t fit = 0;
    if (Status s = (*gpu)->kvBlocksThatFit(options.gpuMemoryFraction, &fit); !s)
      return s;
    limits->kvBlocks = std::min(fit, limits->maxSeqs * c.maxBlocksPerSeq);
  }
  return (*gpu)->allocateKvCache(limits->kvBlocks, c.kvDtype);
}

Status Engine::create(const Artifact &artifact, const EngineOptions &options,
                      std::unique_ptr<Engine> *out) {
  // Setting up allocates per KV block and starts threads: a budget or a
  // thread count the machine cannot give is an error here, not a crash.
  auto build = [&]() -> Status {
    const Manifest &m = artifact.manifest();
    if (!m.hasLlm)
      return Status::error(
          artifact.path() +
          ": not an LLM artifact (compiled from an ONNX graph)");
    std::unique_ptr<Engine> e(new Engine());
    e->impl_ = std::make_unique<Impl>(artifact, options.threads);
    Impl &im = *e->impl_;
    if (!im.pool.status())
      return im.pool.status();
    if (!parseKvCacheDtype(options.kvCacheDtype, im.config.kvDtype,
                           &im.config.kvDtype))
      return Status::error(
          "KV-cache dtype '" + options.kvCacheDtype +
          "' is not one of auto, float32, bfloat16, int8, fp8");
    const LlmConfig &c = im.config;
    engine::StepLimits limits;
    if (Status s = engine::resolveLimits(c, options, &limits); !s)
      return s;
    if (Status s = openEngineGpu(artifact, options, c, &im.gpu, &im.deviceNote,
                                 &limits);
        !s)
      return s;
    if (!im.gpu) {
      if (Status s = engine::checkMemoryBudget(c, limits.kvBlocks,
                                               m.memory.arenaBytes);
          !s)
        return s;
      if (Status s = im.kv.allocate(c, limits.kvBlocks, options.kvPrefault); !s)
        return s;
      im.executor.setKvCache(&im.kv.view());
    }
    im.executor.setProfiler(options.profiler);
    if (im.gpu)
      im.gpu->setProfiler(options.profiler);
    im.profiler = options.profiler;
    if (Status s = Tokenizer::create(m.tokenizer, &im.tokenizer); !s)
      return Status::error(artifact.path() + ": tokenizer: " + s.message());
    im.eosIds = m.generation.eosIds;
    if (im.eosIds.empty() && m.tokenizer.eosId >= 0)
      im.eosIds.push_back(m.tokenizer.eosId);
    im.context = c.contextLength();
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
  };
  try {
    return build();
  } catch (const std::bad_alloc &) {
    return Status::error(artifact.path() +
                         ": out of memory while setting up the engine; "
                         "lower the KV budget");
  } catch (const std::system_error &e) {
    return Status::error(artifact.path() +
                         ": cannot start the engine: " + e.what());
  }
}

Status Engine::submit(const RequestParams &request, TokenCallback callback,
                      uint64_t *requestId) {
  Impl &im = *impl_;
  auto r = std::make_unique<EngineRequest>();
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
  r->submitted = EngineClock::now();
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

const std::string &Engine::deviceNote() const { return impl_->deviceNote; }

int64_t Engine::contextLength() const { return impl_->context; }

} // namespace ingot
