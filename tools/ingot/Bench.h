//===- Bench.h - Pieces of `ingot bench` ------------------------*- C++ -*-===//
//
// The benchmark is split by concern: BenchCommand.cpp parses flags and
// drives the modes, BenchWorkload.cpp builds the requests, BenchRun.cpp
// feeds them to the Engine and timestamps every token, BenchReport.cpp
// prints the tables and writes the JSON and the plot.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/AtomicFile.h"
#include "BenchMetrics.h"
#include "ingot/Engine.h"
#include "ingot/MemoryFootprint.h"
#include "ingot/Probe.h"
#include "ingot/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ingot::cli::bench {

struct BenchArgs {
  std::string artifact;
  std::string weightsDir; // --weights DIR (external weights)
  // Workload.
  int64_t inputLen = 128, outputLen = 128;
  double rangeRatio = 0;
  uint64_t seed = 0;
  std::string dataset;
  int64_t numPrompts = -1; // -1: 100, or every line of --dataset
  bool ignoreEos = false;  // for --dataset (synthetic prompts always do)
  double requestRate = 0;  // requests/s, Poisson; 0 = all at once
  std::vector<int64_t> maxConcurrency; // empty = unlimited
  int64_t warmup = 0;
  // Engine, or a server to measure over HTTP instead.
  std::string endpoint, apiKey;
  unsigned threads = 0;
  int64_t kvBlocks = 0, kvCacheMb = 0;
  std::string kvCacheDtype = "auto";
  std::string device = "auto";
  double gpuMemoryFraction = 0.9;
  // llama-bench style modes.
  int64_t pp = 0, tg = 0, repetitions = 3;
  // Reporting.
  std::string sloText;
  SloTargets slo;
  bool probe = true, progress = false;
  std::string jsonPath, plotPath, profilePath;
  std::string commandLine; // echoed in the JSON
};

struct BenchRequest {
  std::vector<int32_t> prompt;
  int64_t outputLen = 0;
  bool ignoreEos = true;
};

/// The warm-up requests followed by the measured ones, or an error naming
/// the flag (or the dataset file and line) at fault.
Status buildWorkload(const BenchArgs &args, const Manifest &manifest,
                     const Tokenizer &tokenizer,
                     std::vector<BenchRequest> *warmup,
                     std::vector<BenchRequest> *measured);
/// `n` random ids in [0, vocab) from `rng` state.
std::vector<int32_t> randomTokens(int64_t n, int64_t vocab, uint64_t *rng);

/// One serving run: what every request saw and how long it all took.
struct ServingRun {
  int64_t maxConcurrency = 0; // 0 = unlimited
  std::vector<RequestTiming> timings;
  double durationS = 0;
  std::string firstError;
  ServingMetrics metrics;
};

/// Where requests go: the in-process engine, or a server over HTTP. Like
/// Engine::submit: token events, then exactly one final event.
using SubmitFn = std::function<Status(const RequestParams &, TokenCallback)>;
SubmitFn engineSubmitter(Engine &engine);

/// Submits `requests` with Poisson arrivals at `rate` (0 = all at once) and
/// at most `maxConcurrency` in flight (0 = no limit), then waits for all.
/// `label` names the run on the progress bar ("" = no bar).
Status runServing(const SubmitFn &submit,
                  const std::vector<BenchRequest> &requests, double rate,
                  int64_t maxConcurrency, uint64_t seed,
                  const std::string &label, ServingRun *run);

/// llama-bench style: one sequence at a time, one warm-up then `reps`.
struct ModeResult {
  int64_t nTokens = 0;
  std::vector<double> tokensPerS;
  MeanStd stats;
  double pctOfCeiling = 0; // NaN without a probe
};
Status runPrefillMode(Engine &engine, int64_t tokens, int64_t reps,
                      int64_t vocab, uint64_t seed, ModeResult *out);
Status runDecodeMode(Engine &engine, int64_t tokens, int64_t reps,
                     int64_t vocab, uint64_t seed, ModeResult *out);

/// Everything the report needs besides the runs.
struct BenchContext {
  const BenchArgs *args = nullptr;
  MachineInfo machine;
  Ceilings ceilings;
  bool probed = false;
  StepCost cost;
  MemoryFootprint footprint;
  EngineStats stats;
  std::string budget;     // Engine::describeBudget()
  int64_t numPrompts = 0; // measured requests (serving mode)
};

/// KV memory at the peak: bytes held, bytes filled, waste in %.
struct KvPeak {
  uint64_t allocatedBytes = 0, usedBytes = 0;
  double wastePct = 0;
};
KvPeak kvPeak(const BenchContext &ctx, const Manifest &manifest);

void printServingTable(const BenchContext &ctx, const ServingRun &run);
void printModesTable(const BenchContext &ctx, const ModeResult *pp,
                     const ModeResult *tg);
void printMemoryTable(const BenchContext &ctx, const Manifest &manifest);
/// Serving-mode ceilings: per-stream decode and prefill as % of ceiling.
double servingDecodePct(const BenchContext &ctx, const ServingMetrics &m);
double servingPrefillPct(const BenchContext &ctx, const ServingMetrics &m);

/// What the serving mode drives: the requests' destination, the tokenizer
/// for text datasets, and the engine counters reported at the end.
struct ServingTarget {
  SubmitFn submit;
  const Tokenizer &tokenizer;
  std::function<EngineStats()> stats;
};
/// Runs the workload at each --max-concurrency level, prints the tables and
/// writes --json/--plot; the exit code.
int runServingMode(const BenchArgs &args, const ServingTarget &target,
                   const Manifest &manifest, BenchContext &ctx, bool progress);
/// `--endpoint`: the serving mode against a server (BenchEndpoint.cpp).
int benchEndpoint(const BenchArgs &args, const Manifest &manifest,
                  bool progress);

std::string servingJson(const BenchContext &ctx, const Manifest &manifest,
                        const std::vector<ServingRun> &runs);
std::string modesJson(const BenchContext &ctx, const Manifest &manifest,
                      const ModeResult *pp, const ModeResult *tg);
/// Draws the figures of `benchJson` (servingJson's text) into the PNG at
/// `path` with bench/plot.py; the error says how to get the Python it needs.
Status writePlot(const std::string &path, const std::string &benchJson);

} // namespace ingot::cli::bench
