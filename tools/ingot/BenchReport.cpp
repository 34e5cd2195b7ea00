//===- BenchReport.cpp - Tables, JSON and plots of `ingot bench` ----------===//
//
// The JSON keys of the serving mode mirror vLLM's result file (ttft_ms,
// tpot_ms, ...; each a {mean, median, std, p50, p90, p95, p99} object) and
// the --pp/--tg keys are a fixed shape scripts depend on; docs/metrics.md
// describes both. A figure that needs the probe is null without it.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "JsonText.h"

#include "ingot/KvCache.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

namespace ingot::cli::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string mib(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  for (; v >= 1024 && u < 4; ++u)
    v /= 1024;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

void row(const char *name, const std::string &value) {
  std::printf("  %-34s %s\n", name, value.c_str());
}

void rowNum(const char *name, double v, const char *fmt = "%.2f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  row(name, buf);
}

void printDistribution(const char *title, const Distribution &d) {
  std::printf("  --- %s (ms, n=%lld) ---\n", title, (long long)d.count);
  std::printf("  %10s %10s %10s %10s %10s %10s %10s\n", "mean", "median", "std",
              "p50", "p90", "p95", "p99");
  std::printf("  %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", d.mean,
              d.median, d.stddev, d.p50, d.p90, d.p95, d.p99);
}

OrderedJson jsonDistribution(const Distribution &d) {
  return {{"mean", finiteOrNull(d.mean)},     {"median", finiteOrNull(d.median)},
          {"std", finiteOrNull(d.stddev)},    {"p50", finiteOrNull(d.p50)},
          {"p90", finiteOrNull(d.p90)},       {"p95", finiteOrNull(d.p95)},
          {"p99", finiteOrNull(d.p99)}};
}

OrderedJson jsonSamples(const std::vector<double> &values) {
  OrderedJson list = OrderedJson::array();
  for (double v : values)
    list.push_back(finiteOrNull(v));
  return list;
}

/// The run's figures into `o`, with the samples bench/plot.py draws.
void jsonServingMetrics(OrderedJson &o, const BenchContext &ctx,
                        const ServingRun &run) {
  const ServingMetrics &m = run.metrics;
  o["ttft_ms"] = jsonDistribution(m.ttftMs);
  o["tpot_ms"] = jsonDistribution(m.tpotMs);
  o["itl_ms"] = jsonDistribution(m.itlMs);
  o["e2e_ms"] = jsonDistribution(m.e2eMs);
  o["completed"] = m.completed, o["failed"] = m.failed;
  o["total_input_tokens"] = m.totalInputTokens;
  o["total_output_tokens"] = m.totalOutputTokens;
  o["duration_s"] = finiteOrNull(m.durationS);
  o["request_throughput"] = finiteOrNull(m.requestThroughput);
  o["output_throughput"] = finiteOrNull(m.outputThroughput);
  o["total_token_throughput"] = finiteOrNull(m.totalTokenThroughput);
  if (m.hasGoodput)
    o["goodput"] = finiteOrNull(m.goodput);
  o["decode_pct_of_bandwidth"] = finiteOrNull(servingDecodePct(ctx, m));
  o["prefill_pct_of_peak"] = finiteOrNull(servingPrefillPct(ctx, m));
  LatencySamples samples = latencySamples(run.timings);
  o["samples_ms"] = {{"ttft", jsonSamples(samples.ttftMs)},
                     {"tpot", jsonSamples(samples.tpotMs)},
                     {"itl", jsonSamples(samples.itlMs)},
                     {"e2e", jsonSamples(samples.e2eMs)}};
}

void jsonCommon(OrderedJson &o, const BenchContext &ctx, const Manifest &m,
                double decodePct, double prefillPct) {
  KvPeak kv = kvPeak(ctx, m);
  o["memory"] = {{"weights_bytes", ctx.footprint.weightsBytes},
                 {"weight_derived_bytes", ctx.footprint.weightDerivedBytes},
                 {"kv_allocated_bytes", kv.allocatedBytes},
                 {"kv_used_bytes", kv.usedBytes},
                 {"kv_waste_pct", finiteOrNull(kv.wastePct)},
                 {"arena_bytes", ctx.footprint.arenaBytes},
                 {"overhead_bytes", ctx.footprint.overheadBytes},
                 {"kv_blocks_total", ctx.stats.kvBlocksTotal},
                 {"peak_kv_blocks_used", ctx.stats.peakKvBlocksUsed},
                 {"total_bytes", ctx.footprint.totalBytes}};
  auto probed = [&](double v) { return finiteOrNull(ctx.probed ? v : kNaN); };
  o["ceilings"] = {
      {"probed", ctx.probed},
      {"read_gbps", probed(ctx.ceilings.readGBps)},
      {"peak_gflops", probed(ctx.ceilings.peakGflops)},
      {"probe_s", probed(ctx.ceilings.probeSeconds)},
      {"decode_pct_of_bandwidth", finiteOrNull(decodePct)},
      {"prefill_pct_of_peak", finiteOrNull(prefillPct)},
      {"decode_bytes_per_token_at_context_0",
       finiteOrNull(decodeBytesPerToken(ctx.cost, 0))},
      {"prefill_linear_flops_per_token",
       finiteOrNull(2.0 * double(ctx.cost.linearParams))}};
  o["machine"] = {{"cpu_model", ctx.machine.cpuModel},
                  {"isa", ctx.machine.isa},
                  {"threads", ctx.machine.threads},
                  {"cores", ctx.machine.cores},
                  {"mem_total_gib", finiteOrNull(ctx.machine.memTotalGiB)}};
}

OrderedJson jsonConfig(const BenchContext &ctx) {
  const BenchArgs &a = *ctx.args;
  OrderedJson c = {{"artifact", a.artifact},
                   {"command", a.commandLine},
                   {"threads", int64_t(a.threads)},
                   {"kv_blocks", a.kvBlocks},
                   {"kv_cache_mb", a.kvCacheMb},
                   {"seed", int64_t(a.seed)}};
  if (a.pp || a.tg) {
    c["pp"] = a.pp, c["tg"] = a.tg;
    c["repetitions"] = a.repetitions;
    return c;
  }
  if (a.dataset.empty()) {
    c["input_len"] = a.inputLen, c["output_len"] = a.outputLen;
    c["range_ratio"] = finiteOrNull(a.rangeRatio);
  } else {
    c["dataset"] = a.dataset;
  }
  c["num_prompts"] = ctx.numPrompts;
  c["request_rate"] = a.requestRate > 0 ? finiteOrNull(a.requestRate)
                                        : OrderedJson("inf");
  c["max_concurrency"] = a.maxConcurrency;
  c["warmup"] = a.warmup;
  if (!a.dataset.empty())
    c["ignore_eos"] = a.ignoreEos;
  if (!a.sloText.empty())
    c["slo"] = a.sloText;
  return c;
}

OrderedJson jsonMode(const ModeResult &r, int64_t reps) {
  return {{"n_tokens", r.nTokens},
          {"repetitions", reps},
          {"tokens_per_s",
           {{"mean", finiteOrNull(r.stats.mean)},
            {"std", finiteOrNull(r.stats.stddev)}}},
          {"runs_tokens_per_s", jsonSamples(r.tokensPerS)},
          {"pct_of_ceiling", finiteOrNull(r.pctOfCeiling)}};
}

} // namespace

KvPeak kvPeak(const BenchContext &ctx, const Manifest &m) {
  KvPeak kv;
  kv.allocatedBytes = ctx.footprint.kvBytes;
  kv.usedBytes = KvCacheStorage::bytesFor(m.llm, ctx.stats.peakKvBlocksUsed);
  const EngineStats &s = ctx.stats;
  if (s.peakKvSlotsHeld > 0)
    kv.wastePct = 100.0 * double(s.peakKvSlotsHeld - s.peakKvSlotsFilled) /
                  double(s.peakKvSlotsHeld);
  return kv;
}

double servingDecodePct(const BenchContext &ctx, const ServingMetrics &m) {
  if (!ctx.probed || m.tpotMs.mean <= 0 || m.completed == 0)
    return kNaN;
  double inMean = double(m.totalInputTokens) / double(m.completed);
  double outMean = double(m.totalOutputTokens) / double(m.completed);
  double bytes = decodeBytesPerToken(ctx.cost, inMean + outMean / 2);
  return 100.0 * bytes * (1000.0 / m.tpotMs.mean) /
         (ctx.ceilings.readGBps * 1e9);
}

double servingPrefillPct(const BenchContext &ctx, const ServingMetrics &m) {
  if (!ctx.probed || m.ttftMs.mean <= 0 || m.completed == 0)
    return kNaN;
  int64_t inMean = m.totalInputTokens / m.completed;
  return 100.0 * prefillFlops(ctx.cost, inMean) / (m.ttftMs.mean / 1000.0) /
         (ctx.ceilings.peakGflops * 1e9);
}

void printMemoryTable(const BenchContext &ctx, const Manifest &m) {
  KvPeak kv = kvPeak(ctx, m);
  std::printf("memory\n");
  row("weights", mib(ctx.footprint.weightsBytes));
  row("kv cache allocated", ctx.budget);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s (%lld blocks), waste %.1f%%",
                mib(kv.usedBytes).c_str(),
                (long long)ctx.stats.peakKvBlocksUsed, kv.wastePct);
  row("kv cache used at peak", buf);
  row("activation arena", mib(ctx.footprint.arenaBytes));
  if (ctx.footprint.weightDerivedBytes)
    row("weight-derived", mib(ctx.footprint.weightDerivedBytes));
  row("runtime overhead", mib(ctx.footprint.overheadBytes));
  row("total", mib(ctx.footprint.totalBytes));
  std::printf("machine\n");
  row("cpu", ctx.machine.cpuModel + " (" + ctx.machine.isa + ", " +
                 std::to_string(ctx.machine.threads) + " threads of " +
                 std::to_string(ctx.machine.cores) + ")");
  if (ctx.probed) {
    rowNum("read bandwidth (GB/s)", ctx.ceilings.readGBps);
    rowNum("peak f32 FMA (GFLOP/s)", ctx.ceilings.peakGflops);
  } else {
    row("ceilings", "not probed (--no-probe)");
  }
}

void printServingTable(const BenchContext &ctx, const ServingRun &run) {
  const ServingMetrics &m = run.metrics;
  std::printf("============ Serving benchmark%s ============\n",
              run.maxConcurrency ? (" (max concurrency " +
                                    std::to_string(run.maxConcurrency) + ")")
                                       .c_str()
                                 : "");
  rowNum("successful requests", double(m.completed), "%.0f");
  rowNum("failed requests", double(m.failed), "%.0f");
  if (!run.firstError.empty())
    row("first error", run.firstError);
  rowNum("duration (s)", m.durationS, "%.3f");
  rowNum("total input tokens", double(m.totalInputTokens), "%.0f");
  rowNum("total output tokens", double(m.totalOutputTokens), "%.0f");
  rowNum("request throughput (req/s)", m.requestThroughput);
  rowNum("output throughput (tok/s)", m.outputThroughput);
  rowNum("total token throughput (tok/s)", m.totalTokenThroughput);
  if (m.hasGoodput)
    rowNum("goodput (req/s)", m.goodput);
  double dec = servingDecodePct(ctx, m), pre = servingPrefillPct(ctx, m);
  if (!std::isnan(dec))
    rowNum("decode per stream (% bandwidth)", dec, "%.1f");
  if (!std::isnan(pre))
    rowNum("prefill incl. queueing (% peak)", pre, "%.1f");
  printDistribution("time to first token", m.ttftMs);
  printDistribution("time per output token (excl. 1st)", m.tpotMs);
  printDistribution("inter-token latency", m.itlMs);
  printDistribution("end-to-end latency", m.e2eMs);
}

void printModesTable(const BenchContext &ctx, const ModeResult *pp,
                     const ModeResult *tg) {
  (void)ctx;
  std::printf("============ Single-sequence throughput ============\n");
  std::printf("  %-8s %8s %24s %18s\n", "test", "tokens",
              "tokens/s (mean ± std)", "% of ceiling");
  for (const ModeResult *r : {pp, tg}) {
    if (!r)
      continue;
    char pct[32] = "-";
    if (!std::isnan(r->pctOfCeiling))
      std::snprintf(pct, sizeof pct, "%.1f%%", r->pctOfCeiling);
    char tps[64];
    std::snprintf(tps, sizeof tps, "%.2f ± %.2f", r->stats.mean,
                  r->stats.stddev);
    std::printf("  %-8s %8lld %24s %18s\n", r == pp ? "pp" : "tg",
                (long long)r->nTokens, tps, pct);
  }
}

std::string servingJson(const BenchContext &ctx, const Manifest &manifest,
                        const std::vector<ServingRun> &runs) {
  OrderedJson o = OrderedJson::object();
  // With a concurrency sweep the top level repeats the last level.
  const ServingRun &last = runs.back();
  jsonServingMetrics(o, ctx, last);
  jsonCommon(o, ctx, manifest, servingDecodePct(ctx, last.metrics),
             servingPrefillPct(ctx, last.metrics));
  o["config"] = jsonConfig(ctx);
  if (runs.size() > 1) {
    OrderedJson sweep = OrderedJson::array();
    for (const ServingRun &r : runs) {
      OrderedJson level = {{"max_concurrency", r.maxConcurrency}};
      jsonServingMetrics(level, ctx, r);
      sweep.push_back(std::move(level));
    }
    o["sweep"] = std::move(sweep);
  }
  return jsonText(o, 2) + '\n';
}

std::string modesJson(const BenchContext &ctx, const Manifest &manifest,
                      const ModeResult *pp, const ModeResult *tg) {
  OrderedJson o = OrderedJson::object();
  if (pp)
    o["pp"] = jsonMode(*pp, ctx.args->repetitions);
  if (tg)
    o["tg"] = jsonMode(*tg, ctx.args->repetitions);
  jsonCommon(o, ctx, manifest, tg ? tg->pctOfCeiling : kNaN,
             pp ? pp->pctOfCeiling : kNaN);
  o["config"] = jsonConfig(ctx);
  return jsonText(o, 2) + '\n';
}

} // namespace ingot::cli::bench
