//===- ServerMetrics.h - Prometheus metrics of `ingot serve` ----*- C++ -*-===//
//
// Request-level figures the server observes (latency histograms, requests
// by finish reason, responses by HTTP status) next to the engine's own
// (running and waiting sequences, KV usage, prefix-cache hits, preemptions,
// token counters), rendered in the Prometheus text exposition format.
// Thread-safe.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Engine.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ingot::server {

/// A cumulative histogram with fixed upper bounds (seconds).
class Histogram {
public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  void render(const std::string &name, const std::string &help,
              std::string *out) const;

private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_; // per bucket, not cumulative; last = +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

class ServerMetrics {
public:
  ServerMetrics();
  /// One finished engine request: times since submission (seconds) of its
  /// first and last token, and how many tokens it produced.
  void requestFinished(const std::string &finishReason, double ttftS,
                       double e2eS, int64_t outputTokens);
  /// The gap between two consecutive tokens of one request.
  void interTokenLatency(double seconds);
  void httpResponse(const std::string &path, int status);
  /// `queued` = generation requests accepted by the server and not yet
  /// running in the engine (its inbox and waiting queue).
  std::string render(const EngineStats &engine, int64_t queued) const;

private:
  mutable std::mutex mu_;
  Histogram ttft_, tpot_, itl_, e2e_;
  std::map<std::string, int64_t> finished_;
  std::map<std::pair<std::string, int>, int64_t> http_;
};

} // namespace ingot::server
