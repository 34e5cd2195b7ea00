//===- BenchEndpoint.cpp - `ingot bench --endpoint`: over HTTP ------------===//
//
// The serving mode with its requests sent to a running server as streamed
// /v1/completions (token-id prompts, ignore_eos), timed on the client: the
// same workload, tables and JSON as in-process, so the two sit side by
// side and their difference is the HTTP path. The artifact supplies the
// workload's vocabulary and tokenizer and the step cost; the server's
// /metrics supplies the KV pool and counters reported at the end.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "ingot/Tokenizer.h"

#include <cstdio>
#include <map>

#ifdef INGOT_HAS_SERVER
#include "CompletionClient.h"
#endif

namespace ingot::cli::bench {

#ifdef INGOT_HAS_SERVER

namespace {

EngineStats serverStats(const server::CompletionClient &client) {
  const std::map<std::string, double> m = client.metrics(); // one request
  auto value = [&](const char *name) {
    auto it = m.find(name);
    return it == m.end() ? 0.0 : it->second;
  };
  auto count = [&](const char *name) { return int64_t(value(name)); };
  EngineStats s;
  s.kvBlocksTotal = count("ingot_kv_cache_blocks_total");
  s.kvBlocksUsed = count("ingot_kv_cache_blocks_used");
  s.preemptions = count("ingot_preemptions_total");
  s.promptTokens = count("ingot_prompt_tokens_total");
  s.generatedTokens = count("ingot_generation_tokens_total");
  s.prefixCacheQueries = count("ingot_prefix_cache_queries_total");
  s.prefixCacheHits = count("ingot_prefix_cache_hits_total");
  s.prefixCacheHitRate = value("ingot_prefix_cache_hit_rate");
  return s;
}

} // namespace

int benchEndpoint(const BenchArgs &a, const Manifest &m, bool progress) {
  std::unique_ptr<server::CompletionClient> client;
  if (Status s = server::CompletionClient::connect(a.endpoint, a.apiKey, &client);
      !s) {
    std::fprintf(stderr, "error: --endpoint %s\n", s.message().c_str());
    return 1;
  }
  std::unique_ptr<Tokenizer> tokenizer;
  if (Status s = Tokenizer::create(m.tokenizer, &tokenizer); !s) {
    std::fprintf(stderr, "error: %s: tokenizer: %s\n", a.artifact.c_str(),
                 s.message().c_str());
    return 1;
  }
  BenchContext ctx;
  ctx.args = &a;
  ctx.machine = describeMachine(a.threads);
  ctx.cost = stepCost(m);
  EngineStats before = serverStats(*client);
  ctx.budget = std::to_string(before.kvBlocksTotal) + " blocks on the server " +
               a.endpoint + " (model '" + client->model() + "')";
  ctx.footprint = computeFootprint(m, before.kvBlocksTotal, ctx.machine.threads);
  server::CompletionClient *c = client.get();
  ServingTarget target{
      [c](const RequestParams &p, TokenCallback cb) {
        return c->submit(p, std::move(cb));
      },
      *tokenizer, [c] { return serverStats(*c); }};
  return runServingMode(a, target, m, ctx, progress);
}

#else

int benchEndpoint(const BenchArgs &, const Manifest &, bool) {
  std::fprintf(stderr, "error: --endpoint needs the HTTP client, and this "
                       "ingot was built without the server libraries\n");
  return 1;
}

#endif

} // namespace ingot::cli::bench
