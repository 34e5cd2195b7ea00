//===- ServerMetrics.cpp - Prometheus metrics of `ingot serve` ------------===//
#include "ServerMetrics.h"

#include <algorithm>
#include <cstdio>

namespace ingot::server {
namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

void header(const std::string &name, const char *type, const std::string &help,
            std::string *out) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type +
          "\n";
}

void scalar(const std::string &name, const char *type, const std::string &help,
            double value, std::string *out) {
  header(name, type, help, out);
  *out += name + " " + num(value) + "\n";
}

// Latency buckets in seconds, from sub-millisecond decode steps on a GPU to
// minute-long requests on a CPU.
std::vector<double> latencyBounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5,
          0.75,  1.0,    2.5,   5.0,  7.5,   10.0, 20.0,  40.0, 80.0};
}

} // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                    bounds_.begin());
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(const std::string &name, const std::string &help,
                       std::string *out) const {
  header(name, "histogram", help, out);
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    std::string le = i < bounds_.size() ? num(bounds_[i]) : "+Inf";
    *out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) +
            "\n";
  }
  *out += name + "_sum " + num(sum_) + "\n";
  *out += name + "_count " + std::to_string(count_) + "\n";
}

ServerMetrics::ServerMetrics()
    : ttft_(latencyBounds()), tpot_(latencyBounds()), itl_(latencyBounds()),
      e2e_(latencyBounds()) {
  for (const char *r : {"stop", "length", "abort", "error"})
    finished_[r] = 0;
}

void ServerMetrics::requestFinished(const std::string &finishReason,
                                    double ttftS, double e2eS,
                                    int64_t outputTokens) {
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_[finishReason];
  if (outputTokens > 0)
    ttft_.observe(ttftS);
  if (outputTokens > 1)
    tpot_.observe((e2eS - ttftS) / double(outputTokens - 1));
  e2e_.observe(e2eS);
}

void ServerMetrics::interTokenLatency(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  itl_.observe(seconds);
}

void ServerMetrics::httpResponse(const std::string &path, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++http_[{path, status}];
}

std::string ServerMetrics::render(const EngineStats &s, int64_t queued) const {
  std::string out;
  scalar("ingot_requests_running", "gauge",
         "Sequences in the engine's running set.", double(s.runningRequests),
         &out);
  scalar("ingot_requests_waiting", "gauge",
         "Requests accepted and not yet running.",
         double(std::max<int64_t>(queued, s.waitingRequests)), &out);
  scalar("ingot_kv_cache_usage_ratio", "gauge",
         "Fraction of KV-cache blocks held by sequences.",
         s.kvBlocksTotal ? double(s.kvBlocksUsed) / double(s.kvBlocksTotal)
                         : 0.0,
         &out);
  scalar("ingot_kv_cache_blocks_used", "gauge",
         "KV-cache blocks held by sequences.", double(s.kvBlocksUsed), &out);
  scalar("ingot_kv_cache_blocks_total", "gauge", "KV-cache blocks in the pool.",
         double(s.kvBlocksTotal), &out);
  scalar("ingot_prefix_cache_queries_total", "counter",
         "Full prompt blocks looked up in the prefix cache.",
         double(s.prefixCacheQueries), &out);
  scalar("ingot_prefix_cache_hits_total", "counter",
         "Full prompt blocks found in the prefix cache.",
         double(s.prefixCacheHits), &out);
  scalar("ingot_prefix_cache_hit_rate", "gauge",
         "Prefix-cache hits over queries since start.", s.prefixCacheHitRate,
         &out);
  scalar("ingot_preemptions_total", "counter",
         "Sequences preempted for lack of KV blocks.", double(s.preemptions),
         &out);
  scalar("ingot_prompt_tokens_total", "counter", "Prompt tokens admitted.",
         double(s.promptTokens), &out);
  scalar("ingot_generation_tokens_total", "counter", "Tokens generated.",
         double(s.generatedTokens), &out);
  std::lock_guard<std::mutex> lock(mu_);
  ttft_.render("ingot_time_to_first_token_seconds",
               "From request arrival to its first token.", &out);
  tpot_.render("ingot_time_per_output_token_seconds",
               "Per request: (last token - first token) / (tokens - 1).", &out);
  itl_.render("ingot_inter_token_latency_seconds",
              "Between consecutive tokens of one request.", &out);
  e2e_.render("ingot_e2e_request_latency_seconds",
              "From request arrival to its last event.", &out);
  header("ingot_requests_finished_total", "counter",
         "Engine requests by OpenAI finish reason.", &out);
  for (const auto &[reason, n] : finished_)
    out += "ingot_requests_finished_total{finish_reason=\"" + reason + "\"} " +
           std::to_string(n) + "\n";
  header("ingot_http_requests_total", "counter",
         "HTTP responses by path and status.", &out);
  for (const auto &[key, n] : http_)
    out += "ingot_http_requests_total{path=\"" + key.first + "\",status=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  return out;
}

} // namespace ingot::server
