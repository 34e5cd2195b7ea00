//===- BenchMetrics.h - Serving-benchmark statistics ------------*- C++ -*-===//
//
// The metrics `ingot bench` reports, computed from per-request timestamps
// only, so that they are unit-testable without a model. The definitions
// follow vLLM's serving benchmark (`vllm bench serve`) so that figures can
// be compared with it; docs/metrics.md states each one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot {

/// What one benchmark request saw, in ms since it was submitted.
struct RequestTiming {
  bool ok = false; // finished without an error
  int64_t inputTokens = 0;
  std::vector<double> tokenTimesMs; // arrival of each output token
  double e2eMs = 0;                 // submit to the final event
};

/// mean, median, population std (numpy's default, ddof = 0) and
/// percentiles with linear interpolation between closest ranks (numpy's
/// default). All zero for an empty sample.
struct Distribution {
  int64_t count = 0;
  double mean = 0, median = 0, stddev = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

/// The q-th percentile (0..100) of `values`, numpy "linear": rank
/// q/100 × (n − 1) between the sorted values. 0 when empty.
double percentile(std::vector<double> values, double q);
Distribution summarize(const std::vector<double> &values);

/// Service-level objectives in ms; a negative value is "not set".
struct SloTargets {
  double ttftMs = -1, tpotMs = -1, e2eMs = -1;
  bool any() const { return ttftMs >= 0 || tpotMs >= 0 || e2eMs >= 0; }
};
/// Parses "ttft_ms=200,tpot_ms=50[,e2e_ms=2000]"; the error names the bad
/// item.
Status parseSlo(const std::string &text, SloTargets *out);

struct ServingMetrics {
  Distribution ttftMs, tpotMs, itlMs, e2eMs;
  int64_t completed = 0, failed = 0;
  int64_t totalInputTokens = 0, totalOutputTokens = 0;
  double durationS = 0;
  double requestThroughput = 0;    // completed requests / s
  double outputThroughput = 0;     // output tokens / s
  double totalTokenThroughput = 0; // (input + output) tokens / s
  bool hasGoodput = false;
  int64_t goodRequests = 0; // completed and within every SLO
  double goodput = 0;       // goodRequests / s
};

/// The samples the distributions summarize, from the requests that
/// completed: TTFT and E2E per request, TPOT per request with n > 1 output
/// tokens, (e2e − ttft) / (n − 1), and ITL, every gap between consecutive
/// tokens of every request.
struct LatencySamples {
  std::vector<double> ttftMs, tpotMs, itlMs, e2eMs;
};
LatencySamples latencySamples(const std::vector<RequestTiming> &reqs);

/// Failed requests count in `failed` only; the distributions are of
/// latencySamples(). `slo` may be null.
ServingMetrics computeServingMetrics(const std::vector<RequestTiming> &reqs,
                                     double durationS, const SloTargets *slo);

/// Mean and population std of repeated measurements (llama-bench style).
struct MeanStd {
  double mean = 0, stddev = 0;
};
MeanStd meanStd(const std::vector<double> &values);

} // namespace ingot
