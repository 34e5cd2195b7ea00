//===- BenchPlot.cpp - `ingot bench --plot` -------------------------------===//
//
// Latency CDFs (TTFT, TPOT, ITL, E2E), one curve per concurrency level, and
// with a concurrency sweep, output throughput against concurrency. The
// samples are recomputed from the timings with the definitions of
// BenchMetrics.h.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "ingot/PngPlot.h"

#include <algorithm>

namespace ingot::cli::bench {

Status writePlot(const std::string &path, const std::vector<ServingRun> &runs) {
  using tools::PlotPanel;
  using tools::PlotSeries;
  auto cdf = [](const std::string &label, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    PlotSeries s;
    s.label = label;
    for (size_t i = 0; i < v.size(); ++i) {
      s.x.push_back(v[i]);
      s.y.push_back(double(i + 1) / double(v.size()));
    }
    return s;
  };
  const char *names[] = {"TTFT", "TPOT", "ITL", "E2E"};
  std::vector<PlotPanel> panels(4);
  for (int k = 0; k < 4; ++k) {
    panels[size_t(k)].title = std::string(names[k]) + " CDF";
    panels[size_t(k)].xLabel = "ms";
    panels[size_t(k)].yLabel = "fraction of requests";
  }
  panels[2].yLabel = "fraction of gaps";
  for (const ServingRun &r : runs) {
    std::string label = r.maxConcurrency
                            ? "concurrency " + std::to_string(r.maxConcurrency)
                            : "all at once";
    std::vector<double> ttft, tpot, itl, e2e;
    for (const RequestTiming &t : r.timings) {
      if (!t.ok || t.tokenTimesMs.empty())
        continue;
      size_t n = t.tokenTimesMs.size();
      ttft.push_back(t.tokenTimesMs[0]);
      e2e.push_back(t.e2eMs);
      if (n > 1)
        tpot.push_back((t.e2eMs - t.tokenTimesMs[0]) / double(n - 1));
      for (size_t i = 1; i < n; ++i)
        itl.push_back(t.tokenTimesMs[i] - t.tokenTimesMs[i - 1]);
    }
    panels[0].series.push_back(cdf(label, ttft));
    panels[1].series.push_back(cdf(label, tpot));
    panels[2].series.push_back(cdf(label, itl));
    panels[3].series.push_back(cdf(label, e2e));
  }
  if (runs.size() > 1) {
    PlotPanel tp;
    tp.title = "throughput vs concurrency";
    tp.xLabel = "max concurrency";
    tp.yLabel = "output tokens/s";
    tp.logX = true;
    PlotSeries s;
    s.label = "output tokens/s";
    for (const ServingRun &r : runs) {
      s.x.push_back(double(r.maxConcurrency));
      s.y.push_back(r.metrics.outputThroughput);
    }
    tp.series.push_back(std::move(s));
    panels.push_back(std::move(tp));
  }
  return tools::writePlotPng(path, panels);
}

} // namespace ingot::cli::bench
