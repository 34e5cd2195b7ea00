//===- BenchCommand.cpp - `ingot bench` -----------------------------------===//
//
// Benchmarks the serving Engine in-process, the way vLLM's serving
// benchmark drives a server: a workload of requests (random token ids or a
// dataset), sent all at once, at a Poisson rate or with a concurrency cap,
// every token timestamped. --pp / --tg measure one sequence's prefill and
// decode speed instead, as llama-bench does. A short probe of the machine's
// read bandwidth and FMA peak puts every figure next to its ceiling.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "CliChecks.h"
#include "CliNumbers.h"
#include "Commands.h"

#include "ingot/Artifact.h"
#include "ingot/KvCache.h"
#include "ingot/Profiler.h"
#include "ingot/ThreadPool.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace ingot::cli {
namespace {
using namespace bench;

void printUsage(FILE *f) {
  std::fprintf(
      f,
      "usage: ingot bench ART.ingot [workload] [engine] [output]\n\n"
      "workload (serving mode, the default):\n"
      "  --input-len N --output-len M   synthetic prompts of random token ids\n"
      "                                 (default 128 and 128; EOS ignored)\n"
      "  --range-ratio R                lengths uniform in [N(1-R), N(1+R)]\n"
      "  --dataset FILE.jsonl           lines {\"prompt\" | "
      "\"prompt_tokens\",\n"
      "                                 \"output_tokens\"} (--ignore-eos)\n"
      "  --num-prompts K                requests measured (default 100)\n"
      "  --request-rate R               Poisson arrivals, R requests/s\n"
      "                                 (default: all at once)\n"
      "  --max-concurrency C[,C2,...]   at most C in flight; a list sweeps\n"
      "  --warmup W                     W requests before measuring\n"
      "  --seed S                       workload and arrival seed (0)\n"
      "  --slo ttft_ms=T,tpot_ms=P[,e2e_ms=E]   report goodput\n"
      "single-sequence modes (only these run when given):\n"
      "  --pp N    prefill tokens/s of an N-token prompt\n"
      "  --tg N    decode tokens/s generating N tokens at batch 1\n"
      "  -r R      repetitions after one warm-up (default 3)\n"
      "engine: --threads T (0, the default: every core), --kv-blocks N |\n"
      "        --kv-cache-mb M,\n"
      "        --kv-cache-dtype auto|float32|int8|fp8\n"
      "server: --endpoint http://HOST:PORT [--api-key KEY] sends the same\n"
      "        workload as streamed /v1/completions and times it here\n"
      "output: --json FILE, --plot FILE.png, --profile TRACE.json,\n"
      "        --progress, --no-probe (skip the ceiling probe)\n");
}

bool parseDouble(const char *s, double *out) {
  char *end = nullptr;
  double v = std::strtod(s, &end);
  if (!*s || *end || !std::isfinite(v))
    return false;
  *out = v;
  return true;
}

int usageError(const std::string &message) {
  std::fprintf(stderr, "error: %s\n\n", message.c_str());
  printUsage(stderr);
  return 2;
}

/// 0 = parsed, -1 = --help printed, 2 = usage error (printed).
int parseArgs(int argc, char **argv, BenchArgs *a) {
  int64_t seed = int64_t(a->seed), threads = int64_t(a->threads);
  for (int i = 0; i < argc; ++i)
    a->commandLine += (i ? " " : "ingot ") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    // Integer flags with their range.
    struct IntFlag {
      const char *name;
      int64_t *target, min, max;
    } ints[] = {{"--input-len", &a->inputLen, 1, kMaxContext},
                {"--output-len", &a->outputLen, 1, kMaxContext},
                {"--num-prompts", &a->numPrompts, 1, int64_t(1) << 20},
                {"--warmup", &a->warmup, 0, int64_t(1) << 20},
                {"--kv-blocks", &a->kvBlocks, 1, kMaxKvBlocks},
                {"--kv-cache-mb", &a->kvCacheMb, 1, kMaxKvCacheMb},
                {"--pp", &a->pp, 1, kMaxContext},
                {"--tg", &a->tg, 2, kMaxContext},
                {"-r", &a->repetitions, 1, 10000},
                {"--seed", &seed, 0, kInt64Max},
                {"--threads", &threads, 0, kMaxThreads}};
    bool handled = false;
    for (const IntFlag &f : ints) {
      if (arg != f.name)
        continue;
      std::string error;
      if (!parseFlagInt(arg, v, f.min, f.max, f.target, &error))
        return usageError(error);
      ++i, handled = true;
    }
    if (handled)
      continue;
    if (arg == "--help" || arg == "-h") {
      printUsage(stdout);
      return -1;
    } else if (arg == "--no-probe") {
      a->probe = false;
    } else if (arg == "--progress") {
      a->progress = true;
    } else if (arg == "--ignore-eos") {
      a->ignoreEos = true;
    } else if (arg == "--range-ratio") {
      if (!v || !parseDouble(v, &a->rangeRatio) || a->rangeRatio < 0 ||
          a->rangeRatio >= 1)
        return usageError("--range-ratio expects a number in [0, 1)");
      ++i;
    } else if (arg == "--request-rate" && v && std::string(v) == "inf") {
      a->requestRate = 0, ++i; // vLLM's spelling of "all at once"
    } else if (arg == "--request-rate") {
      if (!v || !parseDouble(v, &a->requestRate) || a->requestRate <= 0)
        return usageError(std::string("--request-rate expects a rate > 0 in "
                                      "requests/s (omit it to send all at "
                                      "once), got '") +
                          (v ? v : "nothing") + "'");
      ++i;
    } else if (arg == "--max-concurrency") {
      std::string list = v ? v : "";
      size_t pos = 0;
      while (true) {
        size_t comma = list.find(',', pos);
        int64_t x;
        if (!parseInt64(list.substr(pos, comma - pos).c_str(), &x) || x < 1 ||
            x > (int64_t(1) << 20))
          return usageError("--max-concurrency " + list + ": expected "
                            "integers in 1..1048576 separated by commas");
        a->maxConcurrency.push_back(x);
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
      ++i;
    } else if (arg == "--slo" || arg == "--dataset" || arg == "--json" ||
               arg == "--plot" || arg == "--profile" || arg == "--endpoint" ||
               arg == "--api-key" || arg == "--kv-cache-dtype") {
      if (!v || !*v)
        return usageError(arg + " expects a value");
      std::string *target = arg == "--slo"        ? &a->sloText
                            : arg == "--dataset"  ? &a->dataset
                            : arg == "--json"     ? &a->jsonPath
                            : arg == "--plot"     ? &a->plotPath
                            : arg == "--endpoint" ? &a->endpoint
                            : arg == "--api-key"  ? &a->apiKey
                            : arg == "--kv-cache-dtype" ? &a->kvCacheDtype
                                                  : &a->profilePath;
      *target = v;
      ++i;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usageError("unknown option '" + arg + "'");
    } else if (!a->artifact.empty()) {
      return usageError("more than one artifact given");
    } else {
      a->artifact = arg;
    }
  }
  a->seed = uint64_t(seed), a->threads = unsigned(threads);
  if (a->artifact.empty())
    return usageError("give an artifact");
  if (a->kvBlocks && a->kvCacheMb)
    return usageError("give at most one of --kv-blocks and --kv-cache-mb");
  if (!a->endpoint.empty() && (a->pp || a->tg || !a->profilePath.empty()))
    return usageError("--pp, --tg and --profile run in-process, not with "
                      "--endpoint");
  if (!a->sloText.empty())
    if (Status s = parseSlo(a->sloText, &a->slo); !s)
      return usageError(s.message());
  return 0;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

int runModes(const BenchArgs &a, Engine &engine, const Manifest &m,
             BenchContext &ctx) {
  ModeResult pp, tg;
  uint64_t vocab = uint64_t(m.llm.vocabSize);
  if (a.pp) {
    if (Status s = runPrefillMode(engine, a.pp, a.repetitions, int64_t(vocab),
                                  a.seed, &pp);
        !s)
      return fail("--pp " + std::to_string(a.pp) + ": " + s.message());
    pp.pctOfCeiling = ctx.probed ? 100.0 * prefillFlops(ctx.cost, a.pp) /
                                       double(a.pp) * pp.stats.mean /
                                       (ctx.ceilings.peakGflops * 1e9)
                                 : std::nan("");
  }
  if (a.tg) {
    if (Status s = runDecodeMode(engine, a.tg, a.repetitions, int64_t(vocab),
                                 a.seed, &tg);
        !s)
      return fail("--tg " + std::to_string(a.tg) + ": " + s.message());
    // The context grows from 1 to tg tokens: on average 1 + tg / 2.
    tg.pctOfCeiling =
        ctx.probed ? 100.0 * decodeBytesPerToken(ctx.cost, 1 + a.tg / 2.0) *
                         tg.stats.mean / (ctx.ceilings.readGBps * 1e9)
                   : std::nan("");
  }
  ctx.stats = engine.stats();
  const ModeResult *ppr = a.pp ? &pp : nullptr, *tgr = a.tg ? &tg : nullptr;
  printModesTable(ctx, ppr, tgr);
  printMemoryTable(ctx, m);
  if (!a.jsonPath.empty())
    if (Status s = writeFileAtomically(a.jsonPath, modesJson(ctx, m, ppr, tgr));
        !s)
      return fail("--json: " + s.message());
  return 0;
}

} // namespace

namespace bench {

int runServingMode(const BenchArgs &a, const ServingTarget &target,
                   const Manifest &m, BenchContext &ctx, bool progress) {
  std::vector<BenchRequest> warmup, measured;
  if (Status s = buildWorkload(a, m, target.tokenizer, &warmup, &measured);
      !s)
    return fail(s.message());
  ctx.numPrompts = int64_t(measured.size());
  std::vector<int64_t> levels = a.maxConcurrency;
  if (levels.empty())
    levels.push_back(0);
  if (!warmup.empty()) {
    ServingRun w;
    if (Status s = runServing(target.submit, warmup, 0, levels[0], a.seed + 1,
                              progress ? "warm-up" : "", &w);
        !s)
      return fail(s.message());
  }
  std::vector<ServingRun> runs;
  for (int64_t level : levels) {
    ServingRun run;
    std::string label = level ? "concurrency " + std::to_string(level)
                              : std::string("requests");
    if (Status s = runServing(target.submit, measured, a.requestRate, level,
                              a.seed,
                              progress ? label : "", &run);
        !s)
      return fail(s.message());
    run.metrics = computeServingMetrics(run.timings, run.durationS,
                                        a.slo.any() ? &a.slo : nullptr);
    runs.push_back(std::move(run));
  }
  ctx.stats = target.stats();
  for (const ServingRun &r : runs)
    printServingTable(ctx, r);
  printMemoryTable(ctx, m);
  if (!a.jsonPath.empty())
    if (Status s = writeFileAtomically(a.jsonPath, servingJson(ctx, m, runs));
        !s)
      return fail("--json: " + s.message());
  if (!a.plotPath.empty())
    if (Status s = writePlot(a.plotPath, runs); !s)
      return fail("--plot: " + s.message());
  bool allOk = true;
  for (const ServingRun &r : runs)
    allOk &= r.metrics.failed == 0;
  return allOk ? 0 : 1;
}

} // namespace bench

int benchMain(int argc, char **argv) {
  BenchArgs a;
  if (int rc = parseArgs(argc, argv, &a))
    return rc < 0 ? 0 : rc;
  std::unique_ptr<Artifact> artifact;
  if (Status s = Artifact::open(a.artifact, &artifact); !s)
    return fail(s.message());
  // A copy with the KV dtype the engine will use, so the memory figures
  // describe the cache as allocated (a bad name is the engine's error).
  Manifest m = artifact->manifest();
  parseKvCacheDtype(a.kvCacheDtype, m.llm.kvDtype, &m.llm.kvDtype);
  if (!m.hasLlm)
    return fail(a.artifact + ": not an LLM artifact (compiled from an ONNX "
                             "graph); `ingot bench` needs one");
  if (!a.dataset.empty() && (a.pp || a.tg))
    return fail("--dataset is for the serving mode, not --pp/--tg");
  if (std::string e = nonRegularFileError("--dataset " + a.dataset, a.dataset);
      !a.dataset.empty() && !e.empty())
    return fail(e);
  if (std::string e = kvCacheMbError(m.llm, a.kvCacheMb); !e.empty())
    return fail(e);
  if (std::string e = outputIsInputError(
          {{"--json", a.jsonPath}, {"--plot", a.plotPath},
           {"--profile", a.profilePath}},
          {{"the artifact", a.artifact}, {"--dataset", a.dataset}});
      !e.empty())
    return fail(e);
  bool progress = a.progress || isatty(STDERR_FILENO);
  if (!a.endpoint.empty())
    return benchEndpoint(a, m, progress);

  BenchContext ctx;
  ctx.args = &a;
  ctx.machine = describeMachine(a.threads);
  if (a.probe) {
    // The probe's own pool, sized like the engine's, is gone before the
    // engine starts.
    ThreadPool pool(ctx.machine.threads);
    ctx.ceilings = probeCeilings(pool);
    ctx.probed = ctx.ceilings.readGBps > 0 && ctx.ceilings.peakGflops > 0;
  }

  EngineOptions options;
  options.threads = a.threads;
  options.kvBlocks = a.kvBlocks;
  options.kvCacheMb = a.kvCacheMb;
  options.kvCacheDtype = a.kvCacheDtype;
  std::unique_ptr<StepProfiler> profiler;
  if (!a.profilePath.empty()) {
    profiler = std::make_unique<StepProfiler>();
    options.profiler = profiler.get();
  }
  std::unique_ptr<Engine> engine;
  if (Status s = Engine::create(*artifact, options, &engine); !s)
    return fail(a.artifact + ": " + s.message());
  ctx.budget = engine->describeBudget();
  ctx.cost = stepCost(m);
  ctx.footprint =
      computeFootprint(m, engine->stats().kvBlocksTotal, ctx.machine.threads);
  ServingTarget target{engineSubmitter(*engine), engine->tokenizer(),
                       [&engine] { return engine->stats(); }};
  int rc = a.pp || a.tg ? runModes(a, *engine, m, ctx)
                        : runServingMode(a, target, m, ctx, progress);
  if (profiler) {
    engine.reset(); // no step runs while the trace is read
    if (Status s =
            writeFileAtomically(a.profilePath, profiler->chromeTraceJson());
        !s)
      return fail("--profile: " + s.message());
    std::printf("profile (trace in %s)\n", a.profilePath.c_str());
    std::printf(
        "%s", profiler
                  ->topKernelsTable(15, ctx.probed ? ctx.ceilings.readGBps : 0,
                                    ctx.probed ? ctx.ceilings.peakGflops : 0)
                  .c_str());
  }
  return std::fflush(stdout) == 0 ? rc : 1;
}

} // namespace ingot::cli
