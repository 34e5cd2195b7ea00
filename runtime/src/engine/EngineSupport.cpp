//===- EngineSupport.cpp - The engine's model-free helpers ----------------===//
#include "engine/EngineSupport.h"

#include "exec/PhysicalMemory.h"
#include "ingot/KvCache.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace ingot::engine {
namespace {

/// MemAvailable from /proc/meminfo in bytes; 0 when unknown.
uint64_t memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:")
      return kb * 1024;
  }
  return 0;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

} // namespace

Status resolveLimits(const LlmConfig &c, const EngineOptions &o,
                     StepLimits *limits) {
  if (c.maxTokensPerStep <= 0 || c.maxSeqs <= 0 || c.maxBlocksPerSeq <= 0 ||
      c.blockSize <= 0)
    return Status::error("the artifact's step bounds are not set (tokens " +
                         std::to_string(c.maxTokensPerStep) + ", seqs " +
                         std::to_string(c.maxSeqs) + ", blocks " +
                         std::to_string(c.maxBlocksPerSeq) + ")");
  if (o.maxTokensPerStep < 0 || o.maxSeqs < 0 || o.kvBlocks < 0 ||
      o.kvCacheMb < 0)
    return Status::error("engine options must not be negative");
  if (o.maxTokensPerStep > c.maxTokensPerStep)
    return Status::error(
        "max tokens per step " + std::to_string(o.maxTokensPerStep) +
        " exceeds the compiled bound " + std::to_string(c.maxTokensPerStep));
  if (o.maxSeqs > c.maxSeqs)
    return Status::error("max seqs " + std::to_string(o.maxSeqs) +
                         " exceeds the compiled bound " +
                         std::to_string(c.maxSeqs));
  limits->maxTokensPerStep =
      o.maxTokensPerStep ? o.maxTokensPerStep : c.maxTokensPerStep;
  // Every running sequence must be able to decode each step.
  limits->maxSeqs =
      std::min(o.maxSeqs ? o.maxSeqs : c.maxSeqs, limits->maxTokensPerStep);
  uint64_t perBlock = KvCacheStorage::bytesPerBlock(c);
  if (perBlock == 0)
    return Status::error("invalid KV cache geometry in the artifact");
  int64_t blocks = o.kvBlocks;
  if (!blocks && o.kvCacheMb) {
    const uint64_t ram = physicalMemoryBytes();
    if (uint64_t(o.kvCacheMb) > (ram >> 20))
      return Status::error("a KV budget of " + std::to_string(o.kvCacheMb) +
                           " MiB is more than this machine's " +
                           formatBytes(ram) + " of physical memory");
    blocks = int64_t((uint64_t(o.kvCacheMb) << 20) / perBlock);
  }
  if (!blocks) {
    // The default must let any single request run to the full context.
    blocks = int64_t(memAvailable() / 4 / perBlock);
    blocks = std::min(blocks, limits->maxSeqs * c.maxBlocksPerSeq);
    blocks = std::max(blocks, c.maxBlocksPerSeq);
  }
  // An explicit budget is honoured even when smaller: a request that then
  // cannot fit even alone ends with an error instead of looping.
  limits->kvBlocks = std::max<int64_t>(blocks, 1);
  return Status::ok();
}

Status checkMemoryBudget(const LlmConfig &c, int64_t kvBlocks,
                         uint64_t arenaBytes) {
  const uint64_t kv = KvCacheStorage::bytesFor(c, kvBlocks);
  const uint64_t ram = physicalMemoryBytes();
  uint64_t total;
  if (!__builtin_add_overflow(kv, arenaBytes, &total) && total <= ram)
    return Status::ok();
  return Status::error(
      "the KV cache (" + std::to_string(kvBlocks) + " blocks, " +
      formatBytes(kv) + ") and the activation arena (" +
      formatBytes(arenaBytes) + ") need more than this machine's " +
      formatBytes(ram) + " of physical memory; lower the KV budget");
}

std::string describeBudget(const LlmConfig &c, int64_t kvBlocks) {
  double mib = double(KvCacheStorage::bytesFor(c, kvBlocks)) / (1 << 20);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", mib);
  return std::to_string(kvBlocks) + " blocks \u00d7 " +
         std::to_string(c.blockSize) +
         " tokens = " + std::to_string(kvBlocks * c.blockSize) + " tokens, " +
         buf + " MiB";
}

Status validateRequest(const RequestParams &r,
                       const std::vector<int32_t> &prompt, const LlmConfig &c) {
  const SamplingParams &s = r.sampling;
  auto bad = [](const std::string &what) {
    return Status::error("invalid request: " + what);
  };
  if (prompt.empty())
    return bad("the prompt is empty");
  for (int32_t id : prompt)
    if (id < 0 || id >= c.vocabSize)
      return bad("prompt token " + std::to_string(id) +
                 " is outside the vocabulary [0, " +
                 std::to_string(c.vocabSize) + ")");
  int64_t context = c.contextLength();
  if (int64_t(prompt.size()) >= context)
    return bad("the prompt has " + std::to_string(prompt.size()) +
               " tokens; the compiled context holds " +
               std::to_string(context) + " (prompt and output together)");
  if (!std::isfinite(s.temperature) || s.temperature < 0)
    return bad("temperature " + fmt(s.temperature) + " must be >= 0");
  if (s.topK < 0)
    return bad("top_k " + std::to_string(s.topK) + " must be >= 0 (0 = off)");
  if (!(s.topP > 0 && s.topP <= 1))
    return bad("top_p " + fmt(s.topP) + " must be in (0, 1]");
  if (!(s.minP >= 0 && s.minP <= 1))
    return bad("min_p " + fmt(s.minP) + " must be in [0, 1]");
  if (!std::isfinite(s.repetitionPenalty) || s.repetitionPenalty <= 0)
    return bad("repetition_penalty " + fmt(s.repetitionPenalty) +
               " must be > 0 (1 = off)");
  if (!(s.presencePenalty >= -2 && s.presencePenalty <= 2))
    return bad("presence_penalty " + fmt(s.presencePenalty) +
               " must be in [-2, 2]");
  if (!(s.frequencyPenalty >= -2 && s.frequencyPenalty <= 2))
    return bad("frequency_penalty " + fmt(s.frequencyPenalty) +
               " must be in [-2, 2]");
  if (r.maxNewTokens < 0)
    return bad("max_new_tokens " + std::to_string(r.maxNewTokens) +
               " must be >= 0");
  for (int32_t id : r.stopTokenIds)
    if (id < 0 || id >= c.vocabSize)
      return bad("stop token id " + std::to_string(id) +
                 " is outside the vocabulary");
  for (const std::string &stop : r.stopStrings)
    if (stop.empty())
      return bad("a stop string is empty");
  if (r.logprobs > 20)
    return bad("logprobs " + std::to_string(r.logprobs) + " must be <= 20");
  return Status::ok();
}

int64_t filledKvSlots(const Scheduler &scheduler, const KvBlockManager &blocks,
                      const std::vector<ScheduledChunk> &plan) {
  // Shared prefix blocks are full, so the only empty slots are at the end
  // of each sequence's own last block: its table minus the tokens it will
  // hold once this step has run.
  const int64_t bs = blocks.blockSize();
  std::unordered_map<uint64_t, int64_t> after;
  for (const ScheduledChunk &c : plan)
    after[c.seq] = c.first + c.count;
  int64_t empty = 0;
  for (uint64_t id : scheduler.running()) {
    auto it = after.find(id);
    int64_t filled = it != after.end() ? it->second : scheduler.computed(id);
    int64_t slots = int64_t(blocks.table(id).size()) * bs;
    empty += std::max<int64_t>(slots - filled, 0);
  }
  return std::max<int64_t>(blocks.numUsed() * bs - empty, 0);
}

void fillLogprobs(const float *logits, int64_t vocab, int32_t token, int32_t k,
                  TokenEvent *event) {
  // log p_i = x_i - (max + log sum exp(x - max)), in double so that the
  // 49k-term sum does not lose the small terms.
  float top = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp(double(logits[i]) - double(top));
  const double logZ = double(top) + std::log(sum);
  event->hasLogprob = true;
  event->logprob = float(double(logits[token]) - logZ);
  event->topLogprobs.clear();
  if (k <= 0)
    return;
  // One pass keeping the best k (k <= 20) in order, most likely first and
  // the lower id first among equals: no vocab-sized scratch per token.
  const size_t keep = size_t(std::min<int64_t>(k, vocab));
  auto better = [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  };
  std::vector<TokenLogprob> &best = event->topLogprobs;
  for (int64_t i = 0; i < vocab; ++i) {
    const int32_t id = int32_t(i);
    if (best.size() == keep && !better(id, best.back().token))
      continue;
    auto at = std::upper_bound(
        best.begin(), best.end(), id,
        [&](int32_t x, const TokenLogprob &t) { return better(x, t.token); });
    best.insert(at, {id, 0.0f});
    if (best.size() > keep)
      best.pop_back();
  }
  for (TokenLogprob &t : best)
    t.logprob = float(double(logits[t.token]) - logZ);
}

StepBatch buildStep(const Scheduler &scheduler, const KvBlockManager &blocks,
                    const std::vector<ScheduledChunk> &plan) {
  StepBatch batch;
  for (const ScheduledChunk &c : plan)
    batch.addSequence(scheduler.tokens(c.seq).data() + c.first, c.count,
                      c.first, blocks.table(c.seq), blocks.blockSize());
  return batch;
}

} // namespace ingot::engine
