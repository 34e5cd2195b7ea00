//===- EngineLoop.cpp - The engine's step thread ---------------------------===//
//
// Takes new requests and cancellations from the inbox, schedules a step
// (decodes first, then prefill chunks, preempting when blocks run out),
// runs it, samples each request's next token from its own logits row and
// delivers the token events. Callbacks run here, never under `mu`.
//
//===----------------------------------------------------------------------===//
#include "engine/EngineImpl.h"

#include "engine/EngineSupport.h"
#include "ingot/Profiler.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

namespace ingot {
using engine::ScheduledChunk;

void Engine::Impl::emit(EngineRequest &r, TokenEvent e) {
  e.requestId = r.id;
  if (r.pendingLogprobs.hasLogprob && e.token >= 0) {
    e.hasLogprob = true;
    e.logprob = r.pendingLogprobs.logprob;
    e.topLogprobs = std::move(r.pendingLogprobs.topLogprobs);
    r.pendingLogprobs.hasLogprob = false;
  }
  e.timeMs =
      std::chrono::duration<double, std::milli>(EngineClock::now() - r.submitted)
          .count();
  if (!r.callback)
    return;
  // The callback is the caller's code: if it throws, the request gets no
  // more events and ends with an error; the step thread goes on.
  std::string thrown;
  try {
    r.callback(e);
    return;
  } catch (const std::exception &ex) {
    thrown = ex.what();
  } catch (...) {
    thrown = "an exception that is not a std::exception";
  }
  r.callback = nullptr;
  if (!e.finished)
    brokenCallbacks.emplace_back(r.id, std::move(thrown));
}

void Engine::Impl::finishBrokenCallbacks() {
  std::vector<std::pair<uint64_t, std::string>> broken;
  broken.swap(brokenCallbacks);
  for (const auto &[id, what] : broken)
    finish(id, -1, "", "error", "the request's token callback threw: " + what);
}

void Engine::Impl::guardedStep() {
  std::string thrown;
  try {
    step();
    return;
  } catch (const std::exception &e) {
    thrown = e.what();
  } catch (...) {
    thrown = "an exception that is not a std::exception";
  }
  std::vector<uint64_t> inFlight;
  for (const auto &[id, r] : requests)
    inFlight.push_back(id);
  for (uint64_t id : inFlight)
    finish(id, -1, "", "error",
           "engine step failed: internal error: " + thrown);
}

void Engine::Impl::finish(uint64_t id, int32_t token, std::string text,
                          const std::string &reason, const std::string &error) {
  auto it = requests.find(id);
  if (it == requests.end())
    return;
  std::unique_ptr<EngineRequest> r = std::move(it->second);
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

void Engine::Impl::onToken(EngineRequest &r, int32_t token) {
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

Status Engine::Impl::checkLogits(const std::vector<NamedTensor> &outputs,
                                 size_t rows) const {
  // The loader checks the plan's logits output; this guards the reads below.
  const int64_t vocab = config.vocabSize;
  if (!outputs.empty()) {
    const HostTensor &t = outputs[0].tensor;
    if (t.dtype == DType::F32 && t.shape.size() == 2 &&
        t.shape[0] >= int64_t(rows) && t.shape[1] == vocab &&
        t.data.size() == size_t(t.shape[0] * vocab) * sizeof(float))
      return Status::ok();
  }
  return Status::error(
      "the plan's output 0 is not float32 logits of at least " +
      std::to_string(rows) + " rows of " + std::to_string(vocab) + " columns");
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
  std::vector<NamedTensor> &outputs = stepOutputs;
  Status s = gpu ? gpu->run(batch.toTensors(), &outputs)
                 : executor.run(batch.toTensors(), &outputs);
  ++local.steps;
  if (s)
    s = checkLogits(outputs, plan.size());
  if (!s) {
    for (const ScheduledChunk &c : plan)
      finish(c.seq, -1, "", "error", "engine step failed: " + s.message());
    return;
  }
  scheduler->complete(plan);
  const HostTensor &logits = outputs.at(0).tensor;
  sampleRows(plan, reinterpret_cast<const float *>(logits.data.data()));
  publishStats();
}

void Engine::Impl::sampleRows(const std::vector<ScheduledChunk> &plan,
                              const float *rows) {
  const int64_t n = int64_t(plan.size()), vocab = config.vocabSize;
  stepRequests.assign(plan.size(), nullptr);
  for (size_t i = 0; i < plan.size(); ++i)
    if (plan[i].samples)
      if (auto it = requests.find(plan[i].seq); it != requests.end())
        stepRequests[i] = it->second.get();
  // Each request samples with its own sampler and history, so rows are
  // independent: they run on the pool (idle between steps; on a GPU the
  // only CPU work of a step), each row's result the same as alone. The
  // tokens are delivered afterwards in plan order, on this thread.
  stepTokens.assign(plan.size(), -1);
  pool.parallelFor(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      EngineRequest *r = stepRequests[size_t(i)];
      if (!r)
        continue;
      const float *row = rows + i * vocab;
      const int32_t token =
          engine::sampleNext(*r->sampler, row, vocab, r->prompt, r->generated);
      if (r->params.logprobs >= 0)
        engine::fillLogprobs(row, vocab, token, r->params.logprobs,
                             &r->pendingLogprobs);
      stepTokens[size_t(i)] = token;
    }
  });
  for (size_t i = 0; i < plan.size(); ++i)
    if (stepRequests[i])
      onToken(*stepRequests[i], stepTokens[i]);
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
    std::vector<std::unique_ptr<EngineRequest>> arrived = std::move(inbox);
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
      guardedStep();
    finishBrokenCallbacks();
    lock.lock();
  }
  // Shutting down: whatever is left ends "cancelled".
  std::vector<std::unique_ptr<EngineRequest>> arrived = std::move(inbox);
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
