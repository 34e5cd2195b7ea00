//===- ProfileCommand.cpp - `ingot profile` -------------------------------===//
//
// Runs a fixed prefill + decode workload (B requests of N random prompt
// tokens, G greedy tokens each, EOS ignored) through the continuous-batching
// engine with a StepProfiler, after one short warm-up request whose events
// are dropped (first-touch page faults of the arena and the KV cache are
// not what a profile should show). Prints the step timings by phase and the
// top kernels against the probed ceilings, and writes a Chrome trace.
//
//===----------------------------------------------------------------------===//
#include "CliNumbers.h"
#include "CliParser.h"
#include "Commands.h"
#include "ProfileOutput.h"

#include "ingot/Artifact.h"
#include "ingot/AtomicFile.h"
#include "ingot/Engine.h"
#include "ingot/Probe.h"
#include "ingot/Profiler.h"
#include "ingot/ThreadPool.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace ingot::cli {
namespace {

struct ProfileArgs {
  std::string artifact, trace;
  std::string weightsDir; // --weights DIR (external weights)
  int64_t promptLen = 128, gen = 32, batch = 1, threads = 0, top = 15;
  bool probe = true, byOrigin = false;
};

/// Returns 0 to go on, -1 after --help, else the usage exit code 2.
int parseArgs(int argc, char **argv, ProfileArgs *a) {
  CommandLine cl("profile",
                 "Runs --batch requests of --prompt-len random prompt tokens "
                 "and --gen greedy new tokens through the engine, after a "
                 "short warm-up request, timing every step and kernel.");
  cl.footer("Prints prefill and decode step times, the top kernels with "
            "their achieved GB/s and GFLOP/s as a share of the machine's "
            "probed ceilings (skipped with --no-probe), and writes a Chrome "
            "trace (open it in ui.perfetto.dev).");
  cl.positional("ART", &a->artifact, "the compiled LLM artifact");
  cl.integer("--prompt-len", &a->promptLen, 1, kMaxContext,
             "random prompt tokens per request");
  cl.integer("--gen", &a->gen, 1, kMaxContext, "greedy new tokens per request");
  cl.integer("--batch", &a->batch, 1, kMaxSeqs, "requests run together");
  cl.integer("--threads", &a->threads, 0, kMaxThreads,
             "engine threads; 0: every core");
  cl.integer("--top", &a->top, 1, 100000, "kernels in the table");
  declareWeightsFlag(cl, &a->weightsDir);
  cl.value(
      "--trace", [a](const std::string &v) { a->trace = v; },
      "write a Chrome trace to FILE", "", "FILE.json",
      "--trace expects a file name");
  cl.flag("--by-origin", &a->byOrigin,
          "add a table grouped by graph node, layers folded");
  cl.flag("--no-probe", &a->probe, "skip the ceiling probe", false);
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc == 0 ? -1 : rc;
  if (a->artifact.empty())
    return cl.usageError("give an artifact");
  return 0;
}
int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// Deterministic prompt tokens, distinct per request so that prefix
/// caching shares nothing; ids below 100 (special tokens in most
/// vocabularies) are avoided when the vocabulary allows.
std::vector<int32_t> randomPrompt(int64_t len, int64_t vocab, uint64_t seed) {
  const int64_t lo = vocab > 200 ? 100 : 0;
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  std::vector<int32_t> ids(len);
  for (int32_t &id : ids) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; // xorshift64
    id = int32_t(lo + int64_t(x % uint64_t(vocab - lo)));
  }
  return ids;
}

/// Submits `prompts` with `gen` greedy tokens each and waits for them all.
Status runRequests(Engine &engine,
                   const std::vector<std::vector<int32_t>> &prompts,
                   int64_t gen) {
  std::vector<std::string> errors(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    RequestParams p;
    p.promptTokens = prompts[i];
    p.maxNewTokens = gen;
    p.ignoreEos = true;
    p.sampling.temperature = 0;
    std::string *err = &errors[i];
    if (Status s = engine.submit(
            p,
            [err](const TokenEvent &e) {
              if (e.finished && !e.error.empty())
                *err = e.error;
            },
            nullptr);
        !s)
      return s;
  }
  engine.waitIdle();
  for (const std::string &e : errors)
    if (!e.empty())
      return Status::error(e);
  return Status::ok();
}

/// Nearest-rank percentile of sorted `v`.
double percentile(const std::vector<double> &v, double p) {
  if (v.empty())
    return 0;
  size_t rank = size_t(p / 100.0 * double(v.size()) + 0.999999);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

void printPhase(const char *phase, std::vector<double> ms, int64_t tokens) {
  if (ms.empty())
    return;
  std::sort(ms.begin(), ms.end());
  double total = 0;
  for (double x : ms)
    total += x;
  std::printf("%-8s %4zu steps, %9.3f ms total, mean %8.3f ms, p50 %8.3f ms, "
              "p99 %8.3f ms, %9.1f tokens/s\n",
              phase, ms.size(), total, total / double(ms.size()),
              percentile(ms, 50), percentile(ms, 99),
              total > 0 ? double(tokens) * 1e3 / total : 0.0);
}

} // namespace

int profileMain(int argc, char **argv) {
  ProfileArgs a;
  if (int rc = parseArgs(argc, argv, &a))
    return rc < 0 ? 0 : rc;
  std::unique_ptr<Artifact> artifact;
  if (Status s = Artifact::open(a.artifact, &artifact, {a.weightsDir}); !s)
    return fail(s.message());
  const Manifest &m = artifact->manifest();
  if (!m.hasLlm)
    return fail(a.artifact + ": not an LLM artifact (compiled from an ONNX "
                             "graph); `ingot profile` runs LLM steps");
  const LlmConfig &c = m.llm;
  const int64_t context =
      std::min(c.maxPositions, c.maxBlocksPerSeq * c.blockSize);
  if (a.promptLen + a.gen > context)
    return fail("--prompt-len " + std::to_string(a.promptLen) + " + --gen " +
                std::to_string(a.gen) + " exceeds the context of " +
                std::to_string(context) + " tokens " + a.artifact +
                " was compiled for");

  Ceilings ceilings;
  if (a.probe) {
    // Measured before the engine exists, so nothing else competes.
    ThreadPool pool(unsigned(a.threads));
    ceilings = probeCeilings(pool);
  }

  StepProfiler profiler;
  EngineOptions options;
  options.threads = unsigned(a.threads);
  options.profiler = &profiler;
  // Kernel times come from the CPU executor; the GPU one reports none yet.
  options.device = "cpu";
  // Enough blocks for every request at full length: no preemption.
  const int64_t perSeq = (a.promptLen + a.gen + c.blockSize) / c.blockSize;
  options.kvBlocks = (a.batch + 1) * perSeq;
  if (options.kvBlocks > kMaxKvBlocks)
    return fail("--batch " + std::to_string(a.batch) + " of " +
                std::to_string(a.promptLen + a.gen) + " tokens needs " +
                std::to_string(options.kvBlocks) + " KV blocks, more than the " +
                std::to_string(kMaxKvBlocks) + " a KV cache may have");
  std::unique_ptr<Engine> engine;
  if (Status s = Engine::create(*artifact, options, &engine); !s)
    return fail(a.artifact + ": " + s.message());

  const int64_t warmLen = std::min<int64_t>(a.promptLen, 16);
  if (Status s =
          runRequests(*engine, {randomPrompt(warmLen, c.vocabSize, 999)}, 2);
      !s)
    return fail(a.artifact + ": warm-up: " + s.message());
  profiler.reset();
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t i = 0; i < a.batch; ++i)
    prompts.push_back(randomPrompt(a.promptLen, c.vocabSize, uint64_t(i + 1)));
  if (Status s = runRequests(*engine, prompts, a.gen); !s)
    return fail(a.artifact + ": " + s.message());

  std::printf("profile: %s, batch %lld, prompt %lld tokens, gen %lld tokens\n",
              a.artifact.c_str(), static_cast<long long>(a.batch),
              static_cast<long long>(a.promptLen),
              static_cast<long long>(a.gen));
  if (a.probe)
    std::printf("ceilings: read %.1f GB/s, f32 peak %.1f GFLOP/s (probed in "
                "%.2f s)\n",
                ceilings.readGBps, ceilings.peakGflops, ceilings.probeSeconds);
  std::vector<double> prefill, decode, mixed;
  int64_t prefillTokens = 0, decodeTokens = 0, mixedTokens = 0;
  std::string firstSteps; // the steps before the first pure decode step
  for (const RunEvent &r : profiler.runs()) {
    if (decode.empty() && r.label.rfind("decode", 0) != 0) {
      char line[128];
      std::snprintf(line, sizeof line, "  step %lld, %s tokens: %.3f ms\n",
                    static_cast<long long>(r.run), r.label.c_str(),
                    r.durUs / 1e3);
      firstSteps += line;
    }
    const bool isPrefill = r.label.rfind("prefill", 0) == 0;
    const bool isDecode = r.label.rfind("decode", 0) == 0;
    (isPrefill ? prefill : isDecode ? decode : mixed).push_back(r.durUs / 1e3);
    (isPrefill  ? prefillTokens
     : isDecode ? decodeTokens
                : mixedTokens) += r.tokens;
  }
  std::printf("%s", firstSteps.c_str());
  printPhase("prefill", prefill, prefillTokens);
  printPhase("decode", decode, decodeTokens);
  printPhase("mixed", mixed, mixedTokens);
  std::printf(
      "\ntop kernels:\n%s",
      profiler
          .topKernelsTable(int(a.top), ceilings.readGBps, ceilings.peakGflops)
          .c_str());
  if (a.byOrigin)
    std::printf("\nby graph node:\n%s",
                profiler
                    .topKernelsTable(int(a.top), ceilings.readGBps,
                                     ceilings.peakGflops, /*byOrigin=*/true)
                    .c_str());
  if (!a.trace.empty()) {
    if (Status s = writeChromeTrace(profiler, a.trace, "--trace"); !s)
      return fail(s.message());
    std::printf("trace: %s (open in ui.perfetto.dev)\n", a.trace.c_str());
  }
  return 0;
}

Status writeChromeTrace(const StepProfiler &profiler, const std::string &path,
                        const std::string &flag) {
  if (Status st = writeFileAtomically(path, profiler.chromeTraceJson()); !st)
    return Status::error("cannot write the trace for " + flag + ": " +
                         st.message());
  return Status::ok();
}

} // namespace ingot::cli
