//===- CApi.cpp - The stable C API over Artifact and Engine ---------------===//
//
// Thin: converts the C structs to the C++ ones and Status to return codes
// plus a thread-local message. Nothing here may throw across the boundary;
// the runtime reports errors as Status and does not use exceptions.
//
//===----------------------------------------------------------------------===//
#include "ingot/ingot.h"

#include "ingot/Artifact.h"
#include "ingot/Engine.h"

#include <memory>
#include <string>

struct ingot_artifact {
  std::unique_ptr<ingot::Artifact> artifact;
};

struct ingot_engine {
  std::unique_ptr<ingot::Engine> engine;
  std::string budget;
};

namespace {

thread_local std::string lastError;

int fail(int code, std::string message) {
  lastError = std::move(message);
  return code;
}

int succeed() {
  lastError.clear();
  return INGOT_OK;
}

} // namespace

extern "C" {

const char *ingot_last_error(void) { return lastError.c_str(); }

int ingot_artifact_open(const char *path, ingot_artifact **out) {
  return ingot_artifact_open_with_weights(path, nullptr, out);
}

int ingot_artifact_open_with_weights(const char *path, const char *weights_dir,
                                     ingot_artifact **out) {
  if (!path || !out)
    return fail(INGOT_ERR_INVALID_ARGUMENT,
                "ingot_artifact_open: path and out must not be NULL");
  *out = nullptr;
  auto a = std::make_unique<ingot_artifact>();
  if (ingot::Status s = ingot::Artifact::open(path, &a->artifact,
                                              {weights_dir ? weights_dir : ""});
      !s)
    return fail(INGOT_ERR_IO, s.message());
  *out = a.release();
  return succeed();
}

void ingot_artifact_close(ingot_artifact *artifact) { delete artifact; }

void ingot_engine_options_init(ingot_engine_options *o) {
  if (!o)
    return;
  *o = ingot_engine_options();
  o->prefix_caching = 1;
}

int ingot_engine_create(const ingot_artifact *artifact,
                        const ingot_engine_options *options,
                        ingot_engine **out) {
  if (!artifact || !out)
    return fail(INGOT_ERR_INVALID_ARGUMENT,
                "ingot_engine_create: artifact and out must not be NULL");
  *out = nullptr;
  ingot_engine_options o;
  ingot_engine_options_init(&o);
  if (options)
    o = *options;
  ingot::EngineOptions eo;
  eo.threads = o.threads;
  eo.kvBlocks = o.kv_blocks;
  eo.kvCacheMb = o.kv_cache_mb;
  eo.maxTokensPerStep = o.max_tokens_per_step;
  eo.maxSeqs = o.max_seqs;
  eo.prefixCaching = o.prefix_caching != 0;
  eo.kvCacheDtype = o.kv_cache_dtype ? o.kv_cache_dtype : "auto";
  eo.kvPrefault = o.kv_prefault != 0;
  auto e = std::make_unique<ingot_engine>();
  if (ingot::Status s =
          ingot::Engine::create(*artifact->artifact, eo, &e->engine);
      !s)
    return fail(INGOT_ERR_INVALID_ARGUMENT, s.message());
  e->budget = e->engine->describeBudget();
  *out = e.release();
  return succeed();
}

void ingot_engine_destroy(ingot_engine *engine) { delete engine; }

const char *ingot_engine_describe_budget(const ingot_engine *engine) {
  return engine ? engine->budget.c_str() : "";
}

void ingot_request_init(ingot_request *r) {
  if (!r)
    return;
  *r = ingot_request();
  r->top_p = 1.0;
  r->repetition_penalty = 1.0;
  r->max_new_tokens = 256;
}

int ingot_submit(ingot_engine *engine, const ingot_request *r,
                 ingot_token_callback callback, void *user_data, uint64_t *id) {
  if (!engine || !r)
    return fail(INGOT_ERR_INVALID_ARGUMENT,
                "ingot_submit: engine and request must not be NULL");
  if (!r->prompt_tokens && !r->prompt)
    return fail(INGOT_ERR_BAD_REQUEST,
                "ingot_submit: the request has neither prompt nor "
                "prompt_tokens");
  if ((r->num_stop_token_ids && !r->stop_token_ids) ||
      (r->num_stop_strings && !r->stop_strings))
    return fail(INGOT_ERR_INVALID_ARGUMENT,
                "ingot_submit: a stop list has a count but no array");
  ingot::RequestParams p;
  if (r->prompt_tokens)
    p.promptTokens.assign(r->prompt_tokens,
                          r->prompt_tokens + r->num_prompt_tokens);
  else
    p.prompt = r->prompt;
  p.sampling.temperature = r->temperature;
  p.sampling.topK = r->top_k;
  p.sampling.topP = r->top_p;
  p.sampling.minP = r->min_p;
  p.sampling.repetitionPenalty = r->repetition_penalty;
  p.sampling.presencePenalty = r->presence_penalty;
  p.sampling.frequencyPenalty = r->frequency_penalty;
  p.sampling.seed = r->seed;
  p.maxNewTokens = r->max_new_tokens;
  if (r->num_stop_token_ids)
    p.stopTokenIds.assign(r->stop_token_ids,
                          r->stop_token_ids + r->num_stop_token_ids);
  for (size_t i = 0; i < r->num_stop_strings; ++i) {
    if (!r->stop_strings[i])
      return fail(INGOT_ERR_INVALID_ARGUMENT, "ingot_submit: stop_strings[" +
                                                  std::to_string(i) +
                                                  "] is NULL");
    p.stopStrings.emplace_back(r->stop_strings[i]);
  }
  p.ignoreEos = r->ignore_eos != 0;
  ingot::TokenCallback cb;
  if (callback)
    cb = [callback, user_data](const ingot::TokenEvent &e) {
      ingot_token_event c;
      c.request_id = e.requestId;
      c.token = e.token;
      c.text = e.text.c_str();
      c.text_len = e.text.size();
      c.finished = e.finished ? 1 : 0;
      c.finish_reason = e.finishReason.c_str();
      c.error = e.error.c_str();
      c.time_ms = e.timeMs;
      callback(&c, user_data);
    };
  uint64_t requestId = 0;
  if (ingot::Status s = engine->engine->submit(p, std::move(cb), &requestId);
      !s)
    return fail(INGOT_ERR_BAD_REQUEST, s.message());
  if (id)
    *id = requestId;
  return succeed();
}

int ingot_cancel(ingot_engine *engine, uint64_t id) {
  if (!engine)
    return fail(INGOT_ERR_INVALID_ARGUMENT, "ingot_cancel: engine is NULL");
  engine->engine->cancel(id);
  return succeed();
}

int ingot_wait_idle(ingot_engine *engine) {
  if (!engine)
    return fail(INGOT_ERR_INVALID_ARGUMENT, "ingot_wait_idle: engine is NULL");
  engine->engine->waitIdle();
  return succeed();
}

int ingot_get_stats(const ingot_engine *engine, ingot_stats *out) {
  if (!engine || !out)
    return fail(INGOT_ERR_INVALID_ARGUMENT,
                "ingot_get_stats: engine and stats must not be NULL");
  ingot::EngineStats s = engine->engine->stats();
  out->steps = s.steps;
  out->prompt_tokens = s.promptTokens;
  out->generated_tokens = s.generatedTokens;
  out->preemptions = s.preemptions;
  out->prefix_cache_queries = s.prefixCacheQueries;
  out->prefix_cache_hits = s.prefixCacheHits;
  out->prefix_cache_hit_rate = s.prefixCacheHitRate;
  out->kv_blocks_total = s.kvBlocksTotal;
  out->peak_kv_blocks_used = s.peakKvBlocksUsed;
  out->block_size = s.blockSize;
  out->finished_requests = s.finishedRequests;
  out->failed_requests = s.failedRequests;
  return succeed();
}

} // extern "C"
