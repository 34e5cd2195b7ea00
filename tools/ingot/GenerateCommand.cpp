//===- GenerateCommand.cpp - `ingot generate` -----------------------------===//
#include "BatchGenerate.h"
#include "CliChecks.h"
#include "CliNumbers.h"
#include "Commands.h"
#include "JsonWriter.h"
#include "ProfileOutput.h"

#include "ingot/Artifact.h"
#include "ingot/Generator.h"
#include "ingot/Npy.h"
#include "ingot/Profiler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace ingot::cli {
namespace {

void printGenerateUsage() {
  std::fprintf(
      stderr,
      "usage: ingot generate ART.ingot (--prompt TEXT | --prompt-tokens 1,2,3)\n"
      "         [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P]\n"
      "         [--seed S] [--chat] [--json] [--logits-out FILE.npy]\n"
      "         [--threads N] [--kv-blocks N] [--profile TRACE.json]\n"
      "         [--kv-cache-dtype auto|float32|int8|fp8]\n"
      "       ingot generate ART.ingot --batch-file IN.jsonl\n"
      "         --output OUT.jsonl [--kv-blocks N | --kv-cache-mb M]\n"
      "         [--block-size B] [--max-tokens-per-step N] [--max-seqs N]\n"
      "         [--stats-json FILE] [--threads N] [--no-prefix-caching]\n"
      "         [sampling flags] [--chat]\n\n"
      "  --temperature 0 is greedy; defaults come from the model's\n"
      "  generation_config.json. --prompt-tokens are used verbatim (no BOS).\n"
      "  Each line of IN.jsonl is one request, with the keys \"prompt\" or\n"
      "  \"prompt_tokens\", and optionally \"max_new_tokens\",\n"
      "  \"temperature\", \"top_k\", \"top_p\", \"min_p\",\n"
      "  \"repetition_penalty\", \"presence_penalty\",\n"
      "  \"frequency_penalty\", \"seed\", \"stop\", \"stop_token_ids\",\n"
      "  \"ignore_eos\"; the sampling flags give the defaults. OUT.jsonl has\n"
      "  one line per request, in input order. The exit code is 0 when at\n"
      "  least one request succeeded (failed ones have an \"error\" key and\n"
      "  are reported on stderr) and 1 when every request failed.\n"
      "  --threads 0 (the default) uses every core; at most 1024.\n"
      "  --top-k -1 or 0 turns top-k off; --seed is in 0..2^63-1; a batch\n"
      "  line's \"top_k\", \"seed\" and \"max_new_tokens\" take the same\n"
      "  values as the flags.\n"
      "  --profile writes a Chrome trace of every step and kernel (open it\n"
      "  in ui.perfetto.dev) and prints the top 15 kernels to stderr; it\n"
      "  works in both modes.\n");
}

bool parseDouble(const std::string &s, double *out) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !std::isfinite(v))
    return false;
  *out = v;
  return true;
}

/// "1,2,3": ids in 0..kInt32Max (the vocabulary is checked by the engine).
bool parseIdList(const std::string &s, std::vector<int32_t> *ids) {
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    int64_t v;
    if (!parseInt64(s.substr(pos, comma - pos).c_str(), &v) || v < 0 ||
        v > kInt32Max)
      return false;
    ids->push_back(static_cast<int32_t>(v));
    if (comma == std::string::npos)
      return true;
    pos = comma + 1;
  }
  return false;
}

/// The integer flags of generate: name, range, destination.
struct IntFlag {
  const char *name;
  int64_t min, max;
  int64_t *target;
};

/// The flags of generate that take an integer; `topK` is its own slot.
std::vector<IntFlag> intFlags(GenerateArgs *a, int64_t *topK) {
  return {
      {kMaxNewTokensRange.flag, kMaxNewTokensRange.min, kMaxNewTokensRange.max,
       &a->maxNewTokens},
      {kTopKRange.flag, kTopKRange.min, kTopKRange.max, topK},
      {kSeedRange.flag, kSeedRange.min, kSeedRange.max, &a->seed},
      {"--threads", 0, kMaxThreads, &a->threads},
      {"--kv-blocks", 1, kMaxKvBlocks, &a->kvBlocks},
      {"--kv-cache-mb", 1, kMaxKvCacheMb, &a->kvCacheMb},
      {"--block-size", 1, kMaxBlockSize, &a->blockSize},
      {"--max-tokens-per-step", 1, kMaxTokensPerStep, &a->maxTokensPerStep},
      {"--max-seqs", 1, kMaxSeqs, &a->maxSeqs},
  };
}

/// `flag`'s value as a number with `what` its range in words; else prints
/// the error and returns false.
bool doubleFlag(const std::string &flag, const char *text, double lo,
                double hi, bool openLow, const char *what, double *out) {
  double v = 0;
  if (text && parseDouble(text, &v) && (openLow ? v > lo : v >= lo) &&
      v <= hi) {
    *out = v;
    return true;
  }
  std::fprintf(stderr, "error: %s %s: expected %s\n", flag.c_str(),
               text ? text : "(nothing)", what);
  return false;
}

int checkBatchArgs(const GenerateArgs &a) {
  const char *problem = nullptr;
  if (a.artifact.empty())
    problem = "give an artifact";
  else if (a.hasPrompt || a.hasTokens)
    problem = "--batch-file replaces --prompt and --prompt-tokens";
  else if (a.output.empty())
    problem = "--batch-file needs --output FILE (- for stdout)";
  else if (a.kvBlocks && a.kvCacheMb)
    problem = "give at most one of --kv-blocks and --kv-cache-mb";
  else if (a.json || !a.logitsOut.empty())
    problem = "--json and --logits-out are for a single prompt";
  if (!problem)
    return 0;
  std::fprintf(stderr, "error: %s\n\n", problem);
  printGenerateUsage();
  return 2;
}

/// The single-prompt mode's usage checks; 0 or the usage exit code 2.
int checkSinglePromptArgs(const GenerateArgs &a) {
  bool batchOnly = !a.output.empty() || !a.statsJson.empty() ||
                   a.kvCacheMb || a.blockSize || a.maxTokensPerStep ||
                   a.maxSeqs || !a.prefixCaching;
  if (batchOnly) {
    std::fprintf(stderr, "error: --output, --stats-json, --kv-cache-mb, "
                         "--block-size, --max-tokens-per-step, --max-seqs "
                         "and --no-prefix-caching need --batch-file\n");
    return 2;
  }
  if (a.artifact.empty() || a.hasPrompt == a.hasTokens) {
    std::fprintf(stderr, "error: give an artifact and exactly one of --prompt "
                         "and --prompt-tokens\n\n");
    printGenerateUsage();
    return 2;
  }
  if (a.chat && a.hasTokens) {
    std::fprintf(stderr, "error: --chat formats a --prompt text; it cannot "
                         "wrap --prompt-tokens\n");
    return 2;
  }
  return 0;
}

/// Returns 0 on success, else the exit code for a usage error.
int parseArgs(int argc, char **argv, GenerateArgs *a) {
  int64_t topK = 0;
  const std::vector<IntFlag> ints = intFlags(a, &topK);
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    auto next = [&](std::string *v) {
      if (i + 1 >= argc)
        return false;
      *v = argv[++i];
      return true;
    };
    auto intFlag = std::find_if(ints.begin(), ints.end(),
                                [&](const IntFlag &f) { return arg == f.name; });
    if (intFlag != ints.end()) {
      std::string error;
      if (!parseFlagInt(arg, value, intFlag->min, intFlag->max,
                        intFlag->target, &error)) {
        std::fprintf(stderr, "error: %s\n", error.c_str());
        return 2;
      }
      if (intFlag->target == &topK)
        a->topK = topK;
      ++i;
      continue;
    }
    std::string v;
    bool ok = true;
    if (arg == "--help" || arg == "-h") {
      printGenerateUsage();
      return -1;
    } else if (arg == "--chat") {
      a->chat = true;
    } else if (arg == "--json") {
      a->json = true;
    } else if (arg == "--prompt") {
      ok = next(&a->prompt);
      a->hasPrompt = true;
    } else if (arg == "--prompt-tokens") {
      if (!next(&v) || !parseIdList(v, &a->promptTokens)) {
        std::fprintf(stderr, "error: --prompt-tokens %s: expected token ids "
                     "in 0..%lld separated by commas\n", v.c_str(),
                     static_cast<long long>(kInt32Max));
        return 2;
      }
      a->hasTokens = true;
    } else if (arg == "--temperature") {
      if (!doubleFlag(arg, value, 0, inf, false, "a number >= 0",
                      &a->temperature))
        return 2;
      ++i;
    } else if (arg == "--top-p") {
      if (!doubleFlag(arg, value, 0, 1, true, "a number in (0, 1]", &a->topP))
        return 2;
      ++i;
    } else if (arg == "--kv-cache-dtype") {
      ok = next(&a->kvCacheDtype);
    } else if (arg == "--batch-file") {
      ok = next(&a->batchFile);
    } else if (arg == "--output") {
      ok = next(&a->output);
    } else if (arg == "--stats-json") {
      ok = next(&a->statsJson);
    } else if (arg == "--no-prefix-caching") {
      a->prefixCaching = false;
    } else if (arg == "--logits-out") {
      ok = next(&a->logitsOut);
    } else if (arg == "--profile") {
      ok = next(&a->profile) && !a->profile.empty();
    } else if (!arg.empty() && arg[0] != '-' && a->artifact.empty()) {
      a->artifact = arg;
    } else {
      std::fprintf(stderr, "error: unknown argument '%s'\n\n", arg.c_str());
      printGenerateUsage();
      return 2;
    }
    if (!ok) {
      std::fprintf(stderr, "error: %s needs a value\n", arg.c_str());
      return 2;
    }
  }
  return a->batchFile.empty() ? checkSinglePromptArgs(*a) : checkBatchArgs(*a);
}

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// "" or why a path or the prompt cannot be used: no output may be one of
/// the inputs, the batch file must be a regular file, the prompt UTF-8.
std::string checkPaths(const GenerateArgs &a) {
  const std::vector<FlagPath> inputs = {{"the artifact", a.artifact},
                                        {"--batch-file", a.batchFile}};
  std::string e = outputIsInputError({{"--output", a.output},
                                      {"--stats-json", a.statsJson},
                                      {"--logits-out", a.logitsOut},
                                      {"--profile", a.profile}},
                                     inputs);
  if (e.empty() && a.hasPrompt)
    e = invalidUtf8Error("--prompt", a.prompt);
  return e;
}

} // namespace

int generateMain(int argc, char **argv) {
  GenerateArgs a;
  if (int rc = parseArgs(argc, argv, &a))
    return rc < 0 ? 0 : rc;
  if (std::string e = checkPaths(a); !e.empty())
    return fail(e);
  if (!a.batchFile.empty())
    return batchGenerateMain(a);
  std::unique_ptr<Artifact> artifact;
  if (Status s = Artifact::open(a.artifact, &artifact); !s)
    return fail(s.message());
  std::unique_ptr<Generator> gen;
  if (Status s = Generator::create(*artifact, static_cast<unsigned>(a.threads),
                                   a.kvBlocks, &gen, a.kvCacheDtype);
      !s)
    return fail(s.message());
  StepProfiler profiler;
  if (!a.profile.empty())
    gen->setProfiler(&profiler);

  const GenerationDefaults &defaults = artifact->manifest().generation;
  std::vector<int32_t> prompt = a.promptTokens;
  if (a.hasPrompt) {
    std::string text = a.prompt;
    if (a.chat) {
      if (Status s = gen->tokenizer().applyChatTemplate(
              {{"user", a.prompt}}, /*addGenerationPrompt=*/true, &text);
          !s)
        return fail(a.artifact + ": " + s.message());
    }
    // A chat template writes its own BOS; otherwise the tokenizer says.
    prompt = gen->tokenizer().encode(text, !a.chat && gen->tokenizer().addBos());
  }

  GenerateOptions options;
  options.maxNewTokens = a.maxNewTokens >= 0 ? a.maxNewTokens
                                             : defaults.maxNewTokens;
  options.sampling.temperature =
      a.temperature >= 0 ? a.temperature : defaults.temperature;
  options.sampling.topK = topKForEngine(a.topK.value_or(defaults.topK));
  options.sampling.topP = a.topP > 0 ? a.topP : defaults.topP;
  options.sampling.seed = static_cast<uint64_t>(a.seed);
  if (!a.json)
    options.onToken = [](int32_t, const std::string &text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    };

  GenerateResult result;
  if (Status s = gen->generate(prompt, options, &result); !s)
    return fail(a.artifact + ": " + s.message());

  if (!a.logitsOut.empty()) {
    HostTensor t;
    t.dtype = DType::F32;
    t.shape = {static_cast<int64_t>(result.promptLogits.size())};
    t.data.resize(result.promptLogits.size() * sizeof(float));
    std::memcpy(t.data.data(), result.promptLogits.data(), t.data.size());
    if (Status s = writeNpy(a.logitsOut, t); !s)
      return fail(s.message());
  }
  size_t n = result.tokens.size();
  double tokensPerSecond = result.tpotMs > 0 ? 1000.0 / result.tpotMs : 0;
  if (a.json) {
    std::string out;
    json::Writer w(&out, 0);
    w.beginObject();
    w.key("prompt_tokens");
    w.beginArray(true);
    for (int32_t id : prompt)
      w.value(static_cast<int64_t>(id));
    w.endArray();
    w.key("tokens");
    w.beginArray(true);
    for (int32_t id : result.tokens)
      w.value(static_cast<int64_t>(id));
    w.endArray();
    w.field("text", result.text);
    w.field("finish_reason", result.finishReason);
    w.field("ttft_ms", result.ttftMs);
    w.field("tpot_ms", result.tpotMs);
    w.endObject();
    std::printf("%s\n", out.c_str());
  } else {
    std::printf("\n");
    std::fflush(stdout);
    std::fprintf(stderr,
                 "[%zu prompt tokens, %zu generated (%s); TTFT %.1f ms, "
                 "TPOT %.1f ms, %.1f tokens/s]\n",
                 prompt.size(), n, result.finishReason.c_str(), result.ttftMs,
                 result.tpotMs, tokensPerSecond);
  }
  // After the text and its newline, so the table starts on a line of its
  // own in a terminal.
  if (!a.profile.empty()) {
    if (Status s = writeChromeTrace(profiler, a.profile, "--profile"); !s)
      return fail(s.message());
    std::fprintf(stderr, "%s", profiler.topKernelsTable(15, 0, 0).c_str());
  }
  return 0;
}

} // namespace ingot::cli
