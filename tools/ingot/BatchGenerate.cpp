//===- BatchGenerate.cpp - `ingot generate --batch-file` ------------------===//
//
// Every line of the batch file becomes one request, all submitted at once to
// one Engine. A line that cannot be used (bad JSON, a wrong type, a value out
// of range, or one the engine rejects) gets an "error" in its output line and
// never stops the others: a batch is many independent users. The exit code
// is 1 only when every request failed (BatchGenerate.h).
//
//===----------------------------------------------------------------------===//
#include "BatchGenerate.h"
#include "BatchLineParser.h"
#include "CliChecks.h"
#include "JsonText.h"
#include "ProfileOutput.h"

#include "ingot/Artifact.h"
#include "ingot/AtomicFile.h"
#include "ingot/Engine.h"
#include "ingot/Profiler.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>

namespace ingot::cli {
namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

struct Request {
  int64_t line = 0; // 1-based, in the batch file
  RequestParams params;
  std::string error; // set when the line is rejected
  // Filled by the engine's callback.
  std::vector<int32_t> tokens;
  std::string text, finishReason;
  bool finished = false;
};

bool readLines(const std::string &path, std::vector<std::string> *lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines->push_back(line);
  }
  return !in.bad();
}

bool isBlank(const std::string &s) {
  return s.find_first_not_of(" \t") == std::string::npos;
}

/// Everything the batch needs before an engine exists: an LLM artifact of
/// the block size asked for, a sane KV budget and the batch file's lines.
/// 0, or the exit code after printing the error.
int openBatch(const GenerateArgs &a, std::unique_ptr<Artifact> *artifact,
              std::vector<std::string> *lines) {
  if (Status s = Artifact::open(a.artifact, artifact, {a.weightsDir}); !s)
    return fail(s.message());
  const Manifest &manifest = (*artifact)->manifest();
  if (!manifest.hasLlm)
    return fail(a.artifact + ": not an LLM artifact (compiled from an ONNX "
                             "graph); use `ingot run` instead");
  // Blocks are laid out at compile time: the flag can only confirm it.
  if (a.blockSize > 0 && a.blockSize != manifest.llm.blockSize)
    return fail("--block-size " + std::to_string(a.blockSize) +
                " does not match the block size " +
                std::to_string(manifest.llm.blockSize) + " " + a.artifact +
                " was compiled with; recompile with --block-size " +
                std::to_string(a.blockSize));
  if (std::string e = nonRegularFileError("--batch-file " + a.batchFile,
                                          a.batchFile);
      !e.empty())
    return fail(e);
  if (std::string e = kvCacheMbError(manifest.llm, a.kvCacheMb); !e.empty())
    return fail(e);
  if (!readLines(a.batchFile, lines))
    return fail("cannot read " + a.batchFile);
  return 0;
}

EngineOptions engineOptions(const GenerateArgs &a, StepProfiler *profiler) {
  EngineOptions options;
  options.threads = static_cast<unsigned>(a.threads);
  options.kvBlocks = a.kvBlocks;
  options.kvCacheMb = a.kvCacheMb;
  options.kvCacheDtype = a.kvCacheDtype;
  options.maxTokensPerStep = a.maxTokensPerStep;
  options.maxSeqs = a.maxSeqs;
  options.prefixCaching = a.prefixCaching;
  options.device = a.device;
  options.gpuMemoryFraction = a.gpuMemoryFraction;
  if (!a.profile.empty())
    options.profiler = profiler;
  return options;
}

/// One request per non-blank line; a line that cannot be used carries its
/// error, prefixed with FILE:LINE.
std::vector<Request> parseRequests(const GenerateArgs &a,
                                   const std::vector<std::string> &lines,
                                   const Manifest &manifest,
                                   const Tokenizer &tokenizer) {
  std::vector<Request> requests;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (isBlank(lines[i]))
      continue;
    Request r;
    r.line = static_cast<int64_t>(i + 1);
    OrderedJson v;
    if (std::string error = parseJsonLine(lines[i], &v); !error.empty())
      r.error = "invalid JSON: " + error;
    else
      r.error = parseBatchLine(v, a, manifest.generation, tokenizer,
                               manifest.llm.vocabSize, &r.params);
    if (!r.error.empty())
      r.error = a.batchFile + ":" + std::to_string(r.line) + ": " + r.error;
    requests.push_back(std::move(r));
  }
  return requests;
}

/// Submits every usable request at once and waits for all; the seconds it
/// took. Callbacks come from the engine's step thread under `mutex`;
/// `requests` is never resized, so each one only touches its own element.
double runRequests(const GenerateArgs &a, Engine &engine,
                   std::vector<Request> &requests, std::mutex &mutex) {
  auto start = std::chrono::steady_clock::now();
  for (Request &r : requests) {
    if (!r.error.empty())
      continue;
    Request *target = &r;
    auto onToken = [target, &mutex](const TokenEvent &e) {
      std::lock_guard<std::mutex> lock(mutex);
      if (e.token >= 0)
        target->tokens.push_back(e.token);
      target->text += e.text;
      if (e.finished) {
        target->finished = true;
        target->finishReason = e.finishReason;
        if (!e.error.empty())
          target->error = e.error;
      }
    };
    uint64_t id = 0;
    if (Status s = engine.submit(r.params, onToken, &id); !s) {
      std::lock_guard<std::mutex> lock(mutex);
      r.error = a.batchFile + ":" + std::to_string(r.line) + ": " + s.message();
    }
  }
  engine.waitIdle();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

/// The output lines in input order; failed requests are also reported on
/// stderr and counted in *failed.
std::string resultLines(std::vector<Request> &requests, std::mutex &mutex,
                        size_t *failed) {
  std::string out;
  for (size_t i = 0; i < requests.size(); ++i) {
    std::lock_guard<std::mutex> lock(mutex);
    Request &r = requests[i];
    if (r.error.empty() && !r.finished)
      r.error = "the engine stopped before this request finished";
    if (!r.error.empty()) {
      ++*failed;
      r.finishReason = "error";
      std::fprintf(stderr, "error: request %zu: %s\n", i, r.error.c_str());
    }
    OrderedJson line = {{"index", i},
                        {"prompt_tokens", r.params.promptTokens},
                        {"tokens", r.tokens},
                        {"text", r.text},
                        {"finish_reason", r.finishReason}};
    if (!r.error.empty())
      line["error"] = r.error;
    out += jsonText(line) + '\n';
  }
  return out;
}

/// --stats-json: the engine's counters and the batch's throughput.
Status writeStats(const std::string &path, const EngineStats &stats,
                  size_t requests, double seconds) {
  OrderedJson js = {
      {"preemptions", stats.preemptions},
      {"prefix_cache_hit_rate", finiteOrNull(stats.prefixCacheHitRate)},
      {"peak_kv_blocks_used", stats.peakKvBlocksUsed},
      {"kv_blocks_total", stats.kvBlocksTotal},
      {"steps", stats.steps},
      {"generated_tokens", stats.generatedTokens},
      {"prompt_tokens", stats.promptTokens},
      {"requests", requests},
      {"duration_s", finiteOrNull(seconds)},
      {"output_tokens_per_s",
       finiteOrNull(seconds > 0 ? double(stats.generatedTokens) / seconds
                                : 0.0)}};
  return writeFileAtomically(path, jsonText(js, 2) + '\n');
}

} // namespace

int batchGenerateMain(const GenerateArgs &a) {
  std::unique_ptr<Artifact> artifact;
  std::vector<std::string> lines;
  if (int rc = openBatch(a, &artifact, &lines))
    return rc;
  StepProfiler profiler;
  std::unique_ptr<Engine> engine;
  if (Status s = Engine::create(*artifact, engineOptions(a, &profiler), &engine);
      !s)
    return fail(a.artifact + ": " + s.message());
  if (!engine->deviceNote().empty())
    std::fprintf(stderr, "ingot: %s\n", engine->deviceNote().c_str());
  std::fprintf(stderr, "%s\n", engine->describeBudget().c_str());

  std::vector<Request> requests =
      parseRequests(a, lines, artifact->manifest(), engine->tokenizer());
  std::mutex mutex;
  const double seconds = runRequests(a, *engine, requests, mutex);
  EngineStats stats = engine->stats();
  if (!a.profile.empty()) {
    if (Status s = writeChromeTrace(profiler, a.profile, "--profile"); !s)
      return fail(s.message());
    std::fprintf(stderr, "%s", profiler.topKernelsTable(15, 0, 0).c_str());
  }

  size_t failed = 0;
  std::string out = resultLines(requests, mutex, &failed);
  if (a.output == "-") {
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    if (Status st = writeFileAtomically(a.output, out); !st)
      return fail(st.message());
  }
  if (!a.statsJson.empty())
    if (Status st = writeStats(a.statsJson, stats, requests.size(), seconds);
        !st)
      return fail(st.message());
  if (!requests.empty() && failed == requests.size())
    return fail("every one of the " + std::to_string(requests.size()) +
                " requests of " + a.batchFile + " failed (their errors are "
                "above and in " + (a.output == "-" ? "stdout" : a.output) +
                ")");
  return 0;
}

} // namespace ingot::cli
