//===- BenchReport.cpp - Tables, JSON and plots of `ingot bench` ----------===//
//
// The JSON keys of the serving mode mirror vLLM's result file (ttft_ms,
// tpot_ms, ...; each a {mean, median, std, p50, p90, p95, p99} object) and
// the --pp/--tg keys are a fixed shape scripts depend on; docs/metrics.md
// describes both. A figure that needs the probe is null without it.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "JsonWriter.h"

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

void jsonDistribution(json::Writer &w, const char *key, const Distribution &d) {
  w.key(key);
  w.beginObject();
  w.field("mean", d.mean), w.field("median", d.median);
  w.field("std", d.stddev), w.field("p50", d.p50), w.field("p90", d.p90);
  w.field("p95", d.p95), w.field("p99", d.p99);
  w.endObject();
}

void jsonServingMetrics(json::Writer &w, const BenchContext &ctx,
                        const ServingRun &run) {
  const ServingMetrics &m = run.metrics;
  jsonDistribution(w, "ttft_ms", m.ttftMs);
  jsonDistribution(w, "tpot_ms", m.tpotMs);
  jsonDistribution(w, "itl_ms", m.itlMs);
  jsonDistribution(w, "e2e_ms", m.e2eMs);
  w.field("completed", m.completed), w.field("failed", m.failed);
  w.field("total_input_tokens", m.totalInputTokens);
  w.field("total_output_tokens", m.totalOutputTokens);
  w.field("duration_s", m.durationS);
  w.field("request_throughput", m.requestThroughput);
  w.field("output_throughput", m.outputThroughput);
  w.field("total_token_throughput", m.totalTokenThroughput);
  if (m.hasGoodput)
    w.field("goodput", m.goodput);
  w.field("decode_pct_of_bandwidth", servingDecodePct(ctx, m));
  w.field("prefill_pct_of_peak", servingPrefillPct(ctx, m));
}

void jsonCommon(json::Writer &w, const BenchContext &ctx, const Manifest &m,
                double decodePct, double prefillPct) {
  KvPeak kv = kvPeak(ctx, m);
  w.key("memory");
  w.beginObject();
  w.field("weights_bytes", ctx.footprint.weightsBytes);
  w.field("kv_allocated_bytes", kv.allocatedBytes);
  w.field("kv_used_bytes", kv.usedBytes);
  w.field("kv_waste_pct", kv.wastePct);
  w.field("arena_bytes", ctx.footprint.arenaBytes);
  w.field("overhead_bytes", ctx.footprint.overheadBytes);
  w.field("kv_blocks_total", ctx.stats.kvBlocksTotal);
  w.field("peak_kv_blocks_used", ctx.stats.peakKvBlocksUsed);
  w.field("total_bytes", ctx.footprint.totalBytes);
  w.endObject();
  w.key("ceilings");
  w.beginObject();
  w.field("probed", ctx.probed);
  w.field("read_gbps", ctx.probed ? ctx.ceilings.readGBps : kNaN);
  w.field("peak_gflops", ctx.probed ? ctx.ceilings.peakGflops : kNaN);
  w.field("probe_s", ctx.probed ? ctx.ceilings.probeSeconds : kNaN);
  w.field("decode_pct_of_bandwidth", decodePct);
  w.field("prefill_pct_of_peak", prefillPct);
  w.field("decode_bytes_per_token_at_context_0",
          decodeBytesPerToken(ctx.cost, 0));
  w.field("prefill_linear_flops_per_token",
          2.0 * double(ctx.cost.linearParams));
  w.endObject();
  w.key("machine");
  w.beginObject();
  w.field("cpu_model", ctx.machine.cpuModel);
  w.field("isa", ctx.machine.isa);
  w.field("threads", ctx.machine.threads);
  w.field("cores", ctx.machine.cores);
  w.field("mem_total_gib", ctx.machine.memTotalGiB);
  w.endObject();
}

void jsonConfig(json::Writer &w, const BenchContext &ctx) {
  const BenchArgs &a = *ctx.args;
  w.key("config");
  w.beginObject();
  w.field("artifact", a.artifact);
  w.field("command", a.commandLine);
  w.field("threads", int64_t(a.threads));
  w.field("kv_blocks", a.kvBlocks), w.field("kv_cache_mb", a.kvCacheMb);
  w.field("seed", int64_t(a.seed));
  if (a.pp || a.tg) {
    w.field("pp", a.pp), w.field("tg", a.tg);
    w.field("repetitions", a.repetitions);
    w.endObject();
    return;
  }
  if (a.dataset.empty()) {
    w.field("input_len", a.inputLen), w.field("output_len", a.outputLen);
    w.field("range_ratio", a.rangeRatio);
  } else {
    w.field("dataset", a.dataset);
  }
  w.field("num_prompts", ctx.numPrompts);
  a.requestRate > 0 ? w.field("request_rate", a.requestRate)
                    : (w.key("request_rate"), w.value("inf"));
  w.key("max_concurrency");
  w.beginArray(true);
  for (int64_t c : a.maxConcurrency)
    w.value(c);
  w.endArray();
  w.field("warmup", a.warmup);
  if (!a.dataset.empty())
    w.field("ignore_eos", a.ignoreEos);
  if (!a.sloText.empty())
    w.field("slo", a.sloText);
  w.endObject();
}

void jsonMode(json::Writer &w, const char *key, const ModeResult &r,
              int64_t reps) {
  w.key(key);
  w.beginObject();
  w.field("n_tokens", r.nTokens);
  w.field("repetitions", reps);
  w.key("tokens_per_s");
  w.beginObject();
  w.field("mean", r.stats.mean), w.field("std", r.stats.stddev);
  w.endObject();
  w.key("runs_tokens_per_s");
  w.beginArray(true);
  for (double v : r.tokensPerS)
    w.value(v);
  w.endArray();
  w.field("pct_of_ceiling", r.pctOfCeiling);
  w.endObject();
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
  std::string out;
  json::Writer w(&out);
  w.beginObject();
  // With a concurrency sweep the top level repeats the last level.
  const ServingRun &last = runs.back();
  jsonServingMetrics(w, ctx, last);
  jsonCommon(w, ctx, manifest, servingDecodePct(ctx, last.metrics),
             servingPrefillPct(ctx, last.metrics));
  jsonConfig(w, ctx);
  if (runs.size() > 1) {
    w.key("sweep");
    w.beginArray();
    for (const ServingRun &r : runs) {
      w.beginObject();
      w.field("max_concurrency", r.maxConcurrency);
      jsonServingMetrics(w, ctx, r);
      w.endObject();
    }
    w.endArray();
  }
  w.endObject();
  out += '\n';
  return out;
}

std::string modesJson(const BenchContext &ctx, const Manifest &manifest,
                      const ModeResult *pp, const ModeResult *tg) {
  std::string out;
  json::Writer w(&out);
  w.beginObject();
  if (pp)
    jsonMode(w, "pp", *pp, ctx.args->repetitions);
  if (tg)
    jsonMode(w, "tg", *tg, ctx.args->repetitions);
  jsonCommon(w, ctx, manifest, tg ? tg->pctOfCeiling : kNaN,
             pp ? pp->pctOfCeiling : kNaN);
  jsonConfig(w, ctx);
  w.endObject();
  out += '\n';
  return out;
}

} // namespace ingot::cli::bench
