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
#include "CliParser.h"
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

bool parseDouble(const char *s, double *out) {
  char *end = nullptr;
  double v = std::strtod(s, &end);
  if (!*s || *end || !std::isfinite(v))
    return false;
  *out = v;
  return true;
}

/// The workload flags of the serving mode and the single-sequence modes.
void declareWorkload(CommandLine &cl, BenchArgs *a) {
  cl.integer("--input-len", &a->inputLen, 1, kMaxContext,
             "synthetic prompts of N random token ids (EOS ignored)");
  cl.integer("--output-len", &a->outputLen, 1, kMaxContext,
             "tokens generated per synthetic prompt");
  cl.value(
      "--range-ratio",
      [a](const std::string &v) {
        if (!parseDouble(v.c_str(), &a->rangeRatio) || a->rangeRatio < 0 ||
            a->rangeRatio >= 1)
          throw FlagError("--range-ratio expects a number in [0, 1)");
      },
      "lengths uniform in [N(1-R), N(1+R)]", "0", "R",
      "--range-ratio expects a number in [0, 1)");
  cl.value("--dataset", &a->dataset,
           "lines {\"prompt\" | \"prompt_tokens\", \"output_tokens\"}",
           "FILE.jsonl");
  cl.flag("--ignore-eos", &a->ignoreEos,
          "generate a --dataset line's output_tokens in full");
  cl.integer("--num-prompts", &a->numPrompts, 1, int64_t(1) << 20,
             "requests measured (default: 100, or every --dataset line)",
             "100");
  const std::string rateError = "--request-rate expects a rate > 0 in "
                                "requests/s (omit it to send all at once), "
                                "got '";
  cl.value(
      "--request-rate",
      [a, rateError](const std::string &v) {
        if (v == "inf") // vLLM's spelling of "all at once"
          a->requestRate = 0;
        else if (!parseDouble(v.c_str(), &a->requestRate) ||
                 a->requestRate <= 0)
          throw FlagError(rateError + v + "'");
      },
      "Poisson arrivals, R requests/s; inf: all at once", "inf", "R",
      rateError + "nothing'");
  const std::string concurrencyError =
      ": expected integers in 1..1048576 separated by commas";
  cl.value(
      "--max-concurrency",
      [a, concurrencyError](const std::string &list) {
        for (size_t pos = 0;;) {
          size_t comma = list.find(',', pos);
          int64_t x;
          if (!parseInt64(list.substr(pos, comma - pos).c_str(), &x) ||
              x < 1 || x > (int64_t(1) << 20))
            throw FlagError("--max-concurrency " + list + concurrencyError);
          a->maxConcurrency.push_back(x);
          if (comma == std::string::npos)
            break;
          pos = comma + 1;
        }
      },
      "at most C requests in flight; a list sweeps", "unlimited", "C[,C2,...]",
      "--max-concurrency" + concurrencyError);
  cl.integer("--warmup", &a->warmup, 0, int64_t(1) << 20,
             "requests sent before measuring");
  cl.integer(
      "--seed", [a](int64_t v) { a->seed = uint64_t(v); }, 0, kInt64Max,
      "workload and arrival seed", std::to_string(a->seed));
  cl.value("--slo", &a->sloText, "report goodput against these targets",
           "ttft_ms=T,tpot_ms=P[,e2e_ms=E]");
  cl.integer("--pp", &a->pp, 1, kMaxContext,
             "prefill tokens/s of an N-token prompt (single sequence)", "off");
  cl.integer("--tg", &a->tg, 2, kMaxContext,
             "decode tokens/s generating N tokens at batch 1", "off");
  cl.integer("-r", &a->repetitions, 1, 10000,
             "--pp/--tg repetitions after one warm-up");
}

/// The engine, server and output flags.
void declareEngineAndOutput(CommandLine &cl, BenchArgs *a) {
  cl.integer(
      "--threads", [a](int64_t v) { a->threads = unsigned(v); }, 0,
      kMaxThreads, "engine threads; 0: every core", std::to_string(a->threads));
  cl.integer("--kv-blocks", &a->kvBlocks, 1, kMaxKvBlocks,
             "KV-cache blocks (auto: from --kv-cache-mb)", "auto");
  cl.integer("--kv-cache-mb", &a->kvCacheMb, 1, kMaxKvCacheMb,
             "KV-cache budget in MiB (auto: a share of free memory)", "auto");
  cl.value("--kv-cache-dtype", &a->kvCacheDtype,
           "KV-cache element type: auto, float32, bfloat16, int8 or fp8");
  declareDeviceFlags(cl, &a->device, &a->gpuMemoryFraction);
  declareWeightsFlag(cl, &a->weightsDir);
  cl.value("--endpoint", &a->endpoint,
           "send the workload as streamed /v1/completions to this server",
           "http://HOST:PORT");
  cl.value("--api-key", &a->apiKey, "the server's API key", "KEY");
  cl.value("--json", &a->jsonPath, "write the results as JSON", "FILE");
  cl.value("--plot", &a->plotPath, "plot the serving run", "FILE.png");
  cl.value("--profile", &a->profilePath,
           "write a Chrome trace of every step and kernel", "TRACE.json");
  cl.flag("--progress", &a->progress, "a progress bar even off a terminal");
  cl.flag("--no-probe", &a->probe, "skip the ceiling probe", false);
  // These take a file, URL or text: an empty one is a mistake.
  for (const char *name : {"--dataset", "--slo", "--endpoint", "--api-key",
                           "--json", "--plot", "--profile", "--kv-cache-dtype"})
    cl.app().get_option(name)->each([name](const std::string &v) {
      if (v.empty())
        throw FlagError(std::string(name) + " expects a value");
    });
}

/// 0 = parsed, -1 = --help printed, 2 = usage error (printed).
int parseArgs(int argc, char **argv, BenchArgs *a) {
  for (int i = 0; i < argc; ++i)
    a->commandLine += (i ? " " : "ingot ") + std::string(argv[i]);
  CommandLine cl("bench", "Benchmarks the serving engine on a workload of "
                          "requests, or --pp/--tg on one sequence.");
  cl.footer("Serving mode (the default) sends the workload all at once, at a "
            "Poisson rate or with a concurrency cap; --pp/--tg, when given, "
            "run instead. --endpoint measures a server over HTTP.");
  cl.positional("ART", &a->artifact, "the compiled LLM artifact");
  declareWorkload(cl, a);
  declareEngineAndOutput(cl, a);
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc == 0 ? -1 : rc;
  if (a->artifact.empty())
    return cl.usageError("give an artifact");
  if (a->kvBlocks && a->kvCacheMb)
    return cl.usageError("give at most one of --kv-blocks and --kv-cache-mb");
  if (!a->endpoint.empty() && (a->pp || a->tg || !a->profilePath.empty()))
    return cl.usageError("--pp, --tg and --profile run in-process, not with "
                         "--endpoint");
  if (!a->sloText.empty())
    if (Status s = parseSlo(a->sloText, &a->slo); !s)
      return cl.usageError(s.message());
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
    if (Status s = writePlot(a.plotPath, servingJson(ctx, m, runs)); !s)
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
  if (Status s = Artifact::open(a.artifact, &artifact, {a.weightsDir}); !s)
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
  options.device = a.device;
  options.gpuMemoryFraction = a.gpuMemoryFraction;
  if (Status s = Engine::create(*artifact, options, &engine); !s)
    return fail(a.artifact + ": " + s.message());
  if (!engine->deviceNote().empty())
    std::fprintf(stderr, "ingot: %s\n", engine->deviceNote().c_str());
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
