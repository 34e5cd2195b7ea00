//===- BenchMetrics.cpp - Serving-benchmark statistics --------------------===//
#include "BenchMetrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace ingot {

double percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  // numpy's "linear" method: the rank q/100 (n - 1) split between the two
  // neighbouring order statistics.
  double rank = std::clamp(q, 0.0, 100.0) / 100.0 * double(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(rank));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = rank - double(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

MeanStd meanStd(const std::vector<double> &v) {
  MeanStd r;
  if (v.empty())
    return r;
  double sum = 0;
  for (double x : v)
    sum += x;
  r.mean = sum / double(v.size());
  double sq = 0;
  for (double x : v)
    sq += (x - r.mean) * (x - r.mean);
  r.stddev = std::sqrt(sq / double(v.size())); // ddof = 0, as numpy
  return r;
}

Distribution summarize(const std::vector<double> &values) {
  Distribution d;
  d.count = int64_t(values.size());
  if (values.empty())
    return d;
  MeanStd ms = meanStd(values);
  d.mean = ms.mean;
  d.stddev = ms.stddev;
  d.median = d.p50 = percentile(values, 50);
  d.p90 = percentile(values, 90);
  d.p95 = percentile(values, 95);
  d.p99 = percentile(values, 99);
  return d;
}

Status parseSlo(const std::string &text, SloTargets *out) {
  SloTargets slo;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma - pos);
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    double *target = key == "ttft_ms"   ? &slo.ttftMs
                     : key == "tpot_ms" ? &slo.tpotMs
                     : key == "e2e_ms"  ? &slo.e2eMs
                                        : nullptr;
    if (eq == std::string::npos || !target)
      return Status::error("--slo: expected KEY=MS items with KEY one of "
                           "ttft_ms, tpot_ms, e2e_ms, got '" +
                           item + "'");
    std::string value = item.substr(eq + 1);
    char *end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !std::isfinite(v) || v < 0)
      return Status::error("--slo: " + key +
                           " must be a non-negative number of ms, got '" +
                           value + "'");
    *target = v;
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  if (!slo.any())
    return Status::error("--slo: no objective given");
  *out = slo;
  return Status::ok();
}

LatencySamples latencySamples(const std::vector<RequestTiming> &reqs) {
  LatencySamples s;
  for (const RequestTiming &r : reqs) {
    if (!r.ok || r.tokenTimesMs.empty())
      continue; // failed, or finished without a token: no TTFT
    size_t n = r.tokenTimesMs.size();
    double first = r.tokenTimesMs.front();
    s.ttftMs.push_back(first);
    s.e2eMs.push_back(r.e2eMs);
    if (n > 1)
      s.tpotMs.push_back((r.e2eMs - first) / double(n - 1));
    for (size_t i = 1; i < n; ++i)
      s.itlMs.push_back(r.tokenTimesMs[i] - r.tokenTimesMs[i - 1]);
  }
  return s;
}

ServingMetrics computeServingMetrics(const std::vector<RequestTiming> &reqs,
                                     double durationS, const SloTargets *slo) {
  ServingMetrics m;
  for (const RequestTiming &r : reqs) {
    // A request that failed, or finished without a token, has no TTFT.
    if (!r.ok || r.tokenTimesMs.empty()) {
      ++m.failed;
      continue;
    }
    ++m.completed;
    int64_t n = int64_t(r.tokenTimesMs.size());
    m.totalInputTokens += r.inputTokens;
    m.totalOutputTokens += n;
    double first = r.tokenTimesMs.front();
    // vLLM gives a one-token request TPOT 0 for the SLO check but leaves it
    // out of the TPOT statistics.
    double requestTpot = n > 1 ? (r.e2eMs - first) / double(n - 1) : 0;
    if (slo && slo->any()) {
      bool good = (slo->ttftMs < 0 || first <= slo->ttftMs) &&
                  (slo->tpotMs < 0 || requestTpot <= slo->tpotMs) &&
                  (slo->e2eMs < 0 || r.e2eMs <= slo->e2eMs);
      m.goodRequests += good;
    }
  }
  LatencySamples samples = latencySamples(reqs);
  m.ttftMs = summarize(samples.ttftMs);
  m.tpotMs = summarize(samples.tpotMs);
  m.itlMs = summarize(samples.itlMs);
  m.e2eMs = summarize(samples.e2eMs);
  m.durationS = durationS;
  if (durationS > 0) {
    m.requestThroughput = double(m.completed) / durationS;
    m.outputThroughput = double(m.totalOutputTokens) / durationS;
    m.totalTokenThroughput =
        double(m.totalInputTokens + m.totalOutputTokens) / durationS;
  }
  if (slo && slo->any()) {
    m.hasGoodput = true;
    m.goodput = durationS > 0 ? double(m.goodRequests) / durationS : 0;
  }
  return m;
}

} // namespace ingot
