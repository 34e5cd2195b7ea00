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
#include "JsonReader.h"
#include "JsonWriter.h"
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

void writeIds(json::Writer &w, const char *key,
              const std::vector<int32_t> &ids) {
  w.key(key);
  w.beginArray(true);
  for (int32_t id : ids)
    w.value(static_cast<int64_t>(id));
  w.endArray();
}

} // namespace

int batchGenerateMain(const GenerateArgs &a) {
  std::unique_ptr<Artifact> artifact;
  if (Status s = Artifact::open(a.artifact, &artifact); !s)
    return fail(s.message());
  const Manifest &manifest = artifact->manifest();
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
  std::vector<std::string> lines;
  if (!readLines(a.batchFile, &lines))
    return fail("cannot read " + a.batchFile);

  EngineOptions options;
  options.threads = static_cast<unsigned>(a.threads);
  options.kvBlocks = a.kvBlocks;
  options.kvCacheMb = a.kvCacheMb;
  options.kvCacheDtype = a.kvCacheDtype;
  options.maxTokensPerStep = a.maxTokensPerStep;
  options.maxSeqs = a.maxSeqs;
  options.prefixCaching = a.prefixCaching;
  StepProfiler profiler;
  if (!a.profile.empty())
    options.profiler = &profiler;
  std::unique_ptr<Engine> engine;
  if (Status s = Engine::create(*artifact, options, &engine); !s)
    return fail(a.artifact + ": " + s.message());
  std::fprintf(stderr, "%s\n", engine->describeBudget().c_str());

  std::vector<Request> requests;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (isBlank(lines[i]))
      continue;
    Request r;
    r.line = static_cast<int64_t>(i + 1);
    json::Value v;
    std::string error;
    if (!json::Reader(lines[i]).parse(&v, &error))
      r.error = "invalid JSON: " + error;
    else
      r.error = parseBatchLine(v, a, manifest.generation, engine->tokenizer(),
                               manifest.llm.vocabSize, &r.params);
    if (!r.error.empty())
      r.error = a.batchFile + ":" + std::to_string(r.line) + ": " + r.error;
    requests.push_back(std::move(r));
  }

  // Callbacks come from the engine's step thread; `requests` is never
  // resized from here on, so each one only touches its own element.
  std::mutex mutex;
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
    if (Status s = engine->submit(r.params, onToken, &id); !s) {
      std::lock_guard<std::mutex> lock(mutex);
      r.error = a.batchFile + ":" + std::to_string(r.line) + ": " + s.message();
    }
  }
  engine->waitIdle();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EngineStats stats = engine->stats();
  if (!a.profile.empty()) {
    if (Status s = writeChromeTrace(profiler, a.profile, "--profile"); !s)
      return fail(s.message());
    std::fprintf(stderr, "%s", profiler.topKernelsTable(15, 0, 0).c_str());
  }

  std::string out;
  size_t failed = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    std::lock_guard<std::mutex> lock(mutex);
    Request &r = requests[i];
    if (r.error.empty() && !r.finished)
      r.error = "the engine stopped before this request finished";
    if (!r.error.empty()) {
      ++failed;
      r.finishReason = "error";
      std::fprintf(stderr, "error: request %zu: %s\n", i, r.error.c_str());
    }
    json::Writer w(&out, 0);
    w.beginObject();
    w.field("index", static_cast<int64_t>(i));
    writeIds(w, "prompt_tokens", r.params.promptTokens);
    writeIds(w, "tokens", r.tokens);
    w.field("text", r.text);
    w.field("finish_reason", r.finishReason);
    if (!r.error.empty())
      w.field("error", r.error);
    w.endObject();
    out += '\n';
  }
  if (a.output == "-") {
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    if (Status st = writeFileAtomically(a.output, out); !st)
      return fail(st.message());
  }

  if (!a.statsJson.empty()) {
    std::string js;
    json::Writer w(&js, 2);
    w.beginObject();
    w.field("preemptions", stats.preemptions);
    w.field("prefix_cache_hit_rate", stats.prefixCacheHitRate);
    w.field("peak_kv_blocks_used", stats.peakKvBlocksUsed);
    w.field("kv_blocks_total", stats.kvBlocksTotal);
    w.field("steps", stats.steps);
    w.field("generated_tokens", stats.generatedTokens);
    w.field("prompt_tokens", stats.promptTokens);
    w.field("requests", static_cast<int64_t>(requests.size()));
    w.field("duration_s", seconds);
    w.field("output_tokens_per_s",
            seconds > 0 ? double(stats.generatedTokens) / seconds : 0.0);
    w.endObject();
    js += '\n';
    if (Status st = writeFileAtomically(a.statsJson, js); !st)
      return fail(st.message());
  }
  if (!requests.empty() && failed == requests.size())
    return fail("every one of the " + std::to_string(requests.size()) +
                " requests of " + a.batchFile + " failed (their errors are "
                "above and in " + (a.output == "-" ? "stdout" : a.output) +
                ")");
  return 0;
}

} // namespace ingot::cli
