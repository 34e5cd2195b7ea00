//===- Profiler.cpp - Per-step, per-kernel timings ------------------------===//
//
// Events are appended under one mutex: the executor reports one kernel at a
// time from the step thread, so contention is nil, and readers (the trace
// and the table) take copies. The trace puts steps and kernels on two
// tracks of one process so Perfetto shows each kernel under its step.
//
//===----------------------------------------------------------------------===//

#include "ingot/Profiler.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace ingot {
namespace {

int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// bytes over µs, in GB/s (1e9 bytes per second); 0 for no time.
double gbPerSecond(double bytes, double us) {
  return us > 0 ? bytes / us / 1e3 : 0.0;
}

double gflopPerSecond(double flops, double us) {
  return us > 0 ? flops / us / 1e3 : 0.0;
}

/// "layers.12.mlp.down_proj" -> "layers.*.mlp.down_proj": the same node of
/// every layer falls in one group.
std::string originGroup(const std::string &origin) {
  auto digit = [&](size_t k) {
    return std::isdigit(static_cast<unsigned char>(origin[k])) != 0;
  };
  auto word = [&](size_t k) {
    return k < origin.size() &&
           std::isalnum(static_cast<unsigned char>(origin[k])) != 0;
  };
  std::string out;
  size_t i = 0;
  while (i < origin.size()) {
    size_t j = i;
    while (j < origin.size() && digit(j))
      ++j;
    // Only a whole run of digits between separators: "proj2" stays.
    if (j > i && (i == 0 || !word(i - 1)) && !word(j)) {
      out += '*';
      i = j;
    } else {
      out += origin[i++];
    }
  }
  return out;
}

struct Row {
  std::string name;
  int64_t calls = 0;
  double us = 0, bytes = 0, flops = 0;
};

std::string formatRow(const Row &r, double denomUs, int nameWidth,
                      double readGBps, double peakGflops) {
  const double gbs = gbPerSecond(r.bytes, r.us);
  const double gfs = gflopPerSecond(r.flops, r.us);
  char buf[256];
  std::string line;
  std::snprintf(buf, sizeof buf, "%-*s %7lld %10.3f %7.2f %10.1f %8.2f %9.2f",
                nameWidth, r.name.c_str(), static_cast<long long>(r.calls),
                r.us / 1e3, denomUs > 0 ? 100.0 * r.us / denomUs : 0.0,
                r.calls ? r.us / double(r.calls) : 0.0, gbs, gfs);
  line = buf;
  if (readGBps > 0) {
    std::snprintf(buf, sizeof buf, " %6.1f", 100.0 * gbs / readGBps);
    line += buf;
  }
  if (peakGflops > 0) {
    std::snprintf(buf, sizeof buf, " %7.1f", 100.0 * gfs / peakGflops);
    line += buf;
  }
  return line + "\n";
}

} // namespace

StepProfiler::StepProfiler() : t0Ns_(steadyNs()) {}

double StepProfiler::nowUs() const { return double(steadyNs() - t0Ns_) / 1e3; }

void StepProfiler::setNextRunLabel(std::string label, int64_t tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  nextLabel_ = std::move(label);
  nextTokens_ = tokens;
}

int64_t StepProfiler::beginRun() {
  std::lock_guard<std::mutex> lock(mu_);
  RunEvent r;
  r.run = int64_t(runs_.size());
  r.label = nextLabel_.empty() ? "run " + std::to_string(r.run) : nextLabel_;
  r.tokens = nextTokens_;
  nextLabel_.clear();
  nextTokens_ = 0;
  r.startUs = double(steadyNs() - t0Ns_) / 1e3;
  runs_.push_back(std::move(r));
  return runs_.back().run;
}

void StepProfiler::kernel(const KernelEvent &e) {
  std::lock_guard<std::mutex> lock(mu_);
  kernels_.push_back(e);
}

void StepProfiler::endRun(int64_t run) {
  const double now = nowUs();
  std::lock_guard<std::mutex> lock(mu_);
  if (run >= 0 && size_t(run) < runs_.size())
    runs_[run].durUs = now - runs_[run].startUs;
}

void StepProfiler::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  kernels_.clear();
  runs_.clear();
}

std::vector<KernelEvent> StepProfiler::kernels() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kernels_;
}

std::vector<RunEvent> StepProfiler::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

std::string StepProfiler::chromeTraceJson() const {
  using Json = nlohmann::ordered_json;
  const std::vector<KernelEvent> ks = kernels();
  const std::vector<RunEvent> rs = runs();
  // JSON has no NaN: a rate over no time is written as null, on purpose.
  auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(); };
  auto meta = [](const char *what, int tid, const char *name) {
    return Json{{"name", what},
                {"ph", "M"},
                {"pid", 1},
                {"tid", tid},
                {"args", {{"name", name}}}};
  };
  auto complete = [&](const std::string &name, const char *cat, int tid,
                      double ts, double dur, Json args) {
    return Json{{"name", name},       {"cat", cat},
                {"ph", "X"},          {"pid", 1},
                {"tid", tid},         {"ts", number(ts)},
                {"dur", number(dur)}, {"args", std::move(args)}};
  };
  Json events = Json::array();
  events.push_back(meta("process_name", 1, "ingot"));
  events.push_back(meta("thread_name", 1, "steps"));
  events.push_back(meta("thread_name", 2, "kernels"));
  for (const RunEvent &r : rs)
    events.push_back(complete(r.label, "step", 1, r.startUs, r.durUs,
                              {{"run", r.run}, {"tokens", r.tokens}}));
  for (const KernelEvent &k : ks)
    events.push_back(
        complete(k.kernel, "kernel", 2, k.startUs, k.durUs,
                 {{"origin", k.origin},
                  {"step", int64_t(k.stepIndex)},
                  {"run", k.run},
                  {"bytes", k.bytes},
                  {"flops", k.flops},
                  {"GB/s", number(gbPerSecond(k.bytes, k.durUs))},
                  {"GFLOP/s", number(gflopPerSecond(k.flops, k.durUs))}}));
  Json trace = {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(events)}};
  // Kernel names and origins come from the artifact: invalid UTF-8 in them
  // becomes U+FFFD rather than an exception.
  return trace.dump(-1, ' ', false, Json::error_handler_t::replace) + '\n';
}

std::string StepProfiler::topKernelsTable(int topN, double readGBps,
                                          double peakGflops,
                                          bool byOrigin) const {
  const std::vector<KernelEvent> ks = kernels();
  const std::vector<RunEvent> rs = runs();
  std::map<std::string, Row> groups;
  double kernelUs = 0;
  for (const KernelEvent &k : ks) {
    const std::string key =
        byOrigin ? k.kernel + " " + originGroup(k.origin) : k.kernel;
    Row &r = groups[key];
    r.name = key;
    ++r.calls;
    r.us += k.durUs;
    r.bytes += k.bytes;
    r.flops += k.flops;
    kernelUs += k.durUs;
  }
  double stepUs = 0;
  for (const RunEvent &r : rs)
    stepUs += r.durUs;
  // Shares are of the step time; kernels fed without runs (or runs still
  // open) fall back to shares of the kernel time.
  const bool ofSteps = stepUs >= kernelUs && stepUs > 0;
  const double denomUs = ofSteps ? stepUs : kernelUs;

  std::vector<Row> rows;
  for (auto &[key, r] : groups)
    rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row &a, const Row &b) { return a.us > b.us; });
  int nameWidth = 6;
  const size_t shown = std::min(rows.size(), size_t(std::max(topN, 0)));
  for (size_t i = 0; i < shown; ++i)
    nameWidth = std::max(nameWidth, int(rows[i].name.size()));
  nameWidth = std::min(nameWidth, 48);

  char buf[256];
  std::snprintf(buf, sizeof buf, "%-*s %7s %10s %7s %10s %8s %9s", nameWidth,
                byOrigin ? "kernel origin" : "kernel", "calls", "total ms",
                ofSteps ? "% step" : "% kern", "mean us", "GB/s", "GFLOP/s");
  std::string out = buf;
  if (readGBps > 0)
    out += "  % BW";
  if (peakGflops > 0)
    out += "  % peak";
  out += "\n";
  for (size_t i = 0; i < shown; ++i)
    out += formatRow(rows[i], denomUs, nameWidth, readGBps, peakGflops);
  if (shown < rows.size()) {
    Row rest;
    rest.name = "(" + std::to_string(rows.size() - shown) + " more)";
    for (size_t i = shown; i < rows.size(); ++i) {
      rest.calls += rows[i].calls;
      rest.us += rows[i].us;
      rest.bytes += rows[i].bytes;
      rest.flops += rows[i].flops;
    }
    out += formatRow(rest, denomUs, nameWidth, readGBps, peakGflops);
  }
  std::snprintf(buf, sizeof buf,
                "kernels: %.3f ms in %zu calls = %.2f %% of %.3f ms step time "
                "over %zu runs\n",
                kernelUs / 1e3, ks.size(),
                stepUs > 0 ? 100.0 * kernelUs / stepUs : 100.0, stepUs / 1e3,
                rs.size());
  return out + buf;
}

} // namespace ingot
