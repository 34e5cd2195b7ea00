//===- BatchGenerate.cpp - `ingot generate --batch-file` ------------------===//
//
// Every line of the batch file becomes one request, all submitted at once to
// one Engine. A line that cannot be used (bad JSON, a wrong type, a value out
// of range, or one the engine rejects) gets an "error" in its output line and
// never stops the others: a batch is many independent users.
//
//===----------------------------------------------------------------------===//
#include "BatchGenerate.h"
#include "JsonReader.h"
#include "JsonWriter.h"
#include "ProfileOutput.h"

#include "ingot/Artifact.h"
#include "ingot/Engine.h"
#include "ingot/Profiler.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>

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

/// Reads the keys of one line into `r->params`; returns "" or the error
/// (naming the key).
class LineParser {
public:
  LineParser(const json::Value &v, const GenerateArgs &args,
             const GenerationDefaults &defaults, const Tokenizer &tokenizer,
             int64_t vocab)
      : v_(v), args_(args), defaults_(defaults), tokenizer_(tokenizer),
        vocab_(vocab) {}

  std::string parse(RequestParams *r) {
    if (v_.kind != json::Value::Kind::Object)
      return "a request must be a JSON object";
    static const char *const known[] = {"prompt",
                                        "prompt_tokens",
                                        "max_new_tokens",
                                        "temperature",
                                        "top_k",
                                        "top_p",
                                        "min_p",
                                        "repetition_penalty",
                                        "presence_penalty",
                                        "frequency_penalty",
                                        "seed",
                                        "stop",
                                        "stop_token_ids",
                                        "ignore_eos"};
    for (const auto &m : v_.members) {
      bool ok = false;
      for (const char *k : known)
        ok |= m.first == k;
      if (!ok)
        return "unknown key '" + m.first + "'";
    }
    const json::Value *text = v_.find("prompt"),
                      *ids = v_.find("prompt_tokens");
    if (!text == !ids)
      return "give exactly one of 'prompt' and 'prompt_tokens'";
    if (ids && !intList("prompt_tokens", *ids, &r->promptTokens))
      return error_;
    if (text) {
      if (text->kind != json::Value::Kind::String)
        return "key 'prompt': expected a string";
      std::string formatted = text->string;
      if (args_.chat)
        if (Status s = tokenizer_.applyChatTemplate({{"user", text->string}},
                                                    true, &formatted);
            !s)
          return "key 'prompt': " + s.message();
      // A chat template writes its own BOS; otherwise the tokenizer says.
      r->promptTokens =
          tokenizer_.encode(formatted, !args_.chat && tokenizer_.addBos());
    }
    for (int32_t id : r->promptTokens)
      if (id < 0 || id >= vocab_)
        return "key 'prompt_tokens': token " + std::to_string(id) +
               " is outside the vocabulary [0, " + std::to_string(vocab_) + ")";
    if (r->promptTokens.empty())
      return "the prompt is empty";

    SamplingParams &s = r->sampling;
    s.temperature =
        args_.temperature >= 0 ? args_.temperature : defaults_.temperature;
    s.topK = args_.topK >= 0 ? args_.topK : defaults_.topK;
    s.topP = args_.topP > 0 ? args_.topP : defaults_.topP;
    int64_t seed = args_.seed, topK = s.topK;
    r->maxNewTokens =
        args_.maxNewTokens >= 0 ? args_.maxNewTokens : defaults_.maxNewTokens;
    constexpr double inf = std::numeric_limits<double>::infinity();
    bool ok =
        integer("max_new_tokens", 0, std::numeric_limits<int32_t>::max(),
                &r->maxNewTokens) &&
        number("temperature", 0, inf, false, &s.temperature) &&
        integer("top_k", -1, std::numeric_limits<int32_t>::max(), &topK) &&
        number("top_p", 0, 1, true, &s.topP) &&
        number("min_p", 0, 1, false, &s.minP) &&
        number("repetition_penalty", 0, inf, true, &s.repetitionPenalty) &&
        number("presence_penalty", -2, 2, false, &s.presencePenalty) &&
        number("frequency_penalty", -2, 2, false, &s.frequencyPenalty) &&
        integer("seed", 0, std::numeric_limits<int64_t>::max(), &seed);
    if (!ok)
      return error_;
    s.topK = topK < 0 ? 0 : topK; // -1 is "off", as in vLLM
    s.seed = static_cast<uint64_t>(seed);
    if (const json::Value *stop = v_.find("stop")) {
      if (stop->kind == json::Value::Kind::String) {
        r->stopStrings.push_back(stop->string);
      } else if (stop->kind == json::Value::Kind::Array) {
        for (const json::Value &item : stop->items) {
          if (item.kind != json::Value::Kind::String || item.string.empty())
            return "key 'stop': expected a list of non-empty strings";
          r->stopStrings.push_back(item.string);
        }
      } else {
        return "key 'stop': expected a string or a list of strings";
      }
    }
    if (const json::Value *stopIds = v_.find("stop_token_ids"))
      if (!intList("stop_token_ids", *stopIds, &r->stopTokenIds))
        return error_;
    if (const json::Value *b = v_.find("ignore_eos")) {
      if (b->kind != json::Value::Kind::Bool)
        return "key 'ignore_eos': expected true or false";
      r->ignoreEos = b->boolean;
    }
    return "";
  }

private:
  bool err(const std::string &key, const std::string &what) {
    error_ = "key '" + key + "': " + what;
    return false;
  }

  /// A number in [lo, hi] (lo excluded when openLow).
  bool number(const char *key, double lo, double hi, bool openLow,
              double *out) {
    const json::Value *v = v_.find(key);
    if (!v)
      return true;
    if (v->kind != json::Value::Kind::Number)
      return err(key, std::string("expected a number, got ") +
                          json::kindName(v->kind));
    bool ok = (openLow ? v->number > lo : v->number >= lo) && v->number <= hi;
    if (!ok) {
      std::ostringstream range;
      range << (openLow ? "(" : "[") << lo << ", " << hi
            << (std::isinf(hi) ? ")" : "]");
      std::ostringstream got;
      got << v->number;
      return err(key, "must be in " + range.str() + ", got " + got.str());
    }
    *out = v->number;
    return true;
  }

  bool integer(const char *key, int64_t lo, int64_t hi, int64_t *out) {
    const json::Value *v = v_.find(key);
    if (!v)
      return true;
    if (v->kind != json::Value::Kind::Number ||
        v->number != std::floor(v->number))
      return err(key, "expected an integer");
    std::string range =
        "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    int64_t x; // 1e3 is an integer too, just not written as one
    if (v->isInteger)
      x = v->integer;
    else if (std::fabs(v->number) < 0x1p63)
      x = static_cast<int64_t>(v->number);
    else
      return err(key, range);
    if (x < lo || x > hi)
      return err(key, range + ", got " + std::to_string(x));
    *out = x;
    return true;
  }

  bool intList(const char *key, const json::Value &v,
               std::vector<int32_t> *out) {
    if (v.kind != json::Value::Kind::Array)
      return err(key, "expected a list of token ids");
    for (const json::Value &item : v.items) {
      if (item.kind != json::Value::Kind::Number || !item.isInteger)
        return err(key, "expected a list of integer token ids");
      if (item.integer < 0 || item.integer >= vocab_)
        return err(key, "token " + std::to_string(item.integer) +
                            " is outside the vocabulary [0, " +
                            std::to_string(vocab_) + ")");
      out->push_back(static_cast<int32_t>(item.integer));
    }
    return true;
  }

  const json::Value &v_;
  const GenerateArgs &args_;
  const GenerationDefaults &defaults_;
  const Tokenizer &tokenizer_;
  int64_t vocab_;
  std::string error_;
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
      r.error = LineParser(v, a, manifest.generation, engine->tokenizer(),
                           manifest.llm.vocabSize)
                    .parse(&r.params);
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
  for (size_t i = 0; i < requests.size(); ++i) {
    std::lock_guard<std::mutex> lock(mutex);
    Request &r = requests[i];
    if (r.error.empty() && !r.finished)
      r.error = "the engine stopped before this request finished";
    if (!r.error.empty()) {
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
    std::ofstream file(a.output, std::ios::binary);
    if (!(file << out) || !file.flush())
      return fail("cannot write " + a.output);
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
    std::ofstream file(a.statsJson, std::ios::binary);
    if (!(file << js) || !file.flush())
      return fail("cannot write " + a.statsJson);
  }
  return 0;
}

} // namespace ingot::cli
