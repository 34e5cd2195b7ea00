//===- GenerateCommand.cpp - `ingot generate` -----------------------------===//
#include "BatchGenerate.h"
#include "CliChecks.h"
#include "CliNumbers.h"
#include "CliParser.h"
#include "Commands.h"
#include "JsonText.h"
#include "Npy.h"
#include "ProfileOutput.h"

#include "ingot/Artifact.h"
#include "ingot/Generator.h"
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

constexpr const char *kGenerateFooter =
    "--temperature 0 is greedy; the sampling defaults come from the model's "
    "generation_config.json. --prompt-tokens are used verbatim (no BOS).\n\n"
    "Batch mode: ingot generate ART --batch-file IN.jsonl --output OUT.jsonl. "
    "Each line of IN.jsonl is one request, with the keys \"prompt\" or "
    "\"prompt_tokens\", and optionally \"max_new_tokens\", \"temperature\", "
    "\"top_k\", \"top_p\", \"min_p\", \"repetition_penalty\", "
    "\"presence_penalty\", \"frequency_penalty\", \"seed\", \"stop\", "
    "\"stop_token_ids\", \"ignore_eos\"; the sampling flags give the "
    "defaults, and a line's \"top_k\", \"seed\" and \"max_new_tokens\" take "
    "the same values as the flags. OUT.jsonl has one line per request, in "
    "input order. The exit code is 0 when at least one request succeeded "
    "(failed ones have an \"error\" key and are reported on stderr) and 1 "
    "when every request failed.\n\n"
    "--profile writes a Chrome trace of every step and kernel (open it in "
    "ui.perfetto.dev) and prints the top 15 kernels to stderr; it works in "
    "both modes.";
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

/// The integer flags of generate, each with its range.
void declareIntegerFlags(CommandLine &cl, GenerateArgs *a) {
  auto sampling = [&](const SamplingIntRange &r, int64_t *out,
                      const std::string &help, const std::string &shown) {
    cl.integer(r.flag, out, r.min, r.max, help, shown);
  };
  sampling(kMaxNewTokensRange, &a->maxNewTokens, "tokens to generate", "model");
  cl.integer(
      kTopKRange.flag, [a](int64_t v) { a->topK = v; }, kTopKRange.min,
      kTopKRange.max, "sample from the K likeliest tokens; -1 or 0: off",
      "model");
  sampling(kSeedRange, &a->seed, "sampling seed", "");
  cl.integer("--threads", &a->threads, 0, kMaxThreads,
             "engine threads; 0: every core");
  cl.integer("--kv-blocks", &a->kvBlocks, 1, kMaxKvBlocks,
             "KV-cache blocks (auto: from the free memory)", "auto");
  cl.integer("--kv-cache-mb", &a->kvCacheMb, 1, kMaxKvCacheMb,
             "batch: KV-cache budget in MiB", "auto");
  cl.integer("--block-size", &a->blockSize, 1, kMaxBlockSize,
             "batch: confirm the compiled KV block size", "compiled");
  cl.integer("--max-tokens-per-step", &a->maxTokensPerStep, 1,
             kMaxTokensPerStep, "batch: tokens one engine step may process",
             "compiled");
  cl.integer("--max-seqs", &a->maxSeqs, 1, kMaxSeqs,
             "batch: sequences one step may hold", "compiled");
}

/// Stores a number in [lo, hi] (`openLow`: above lo) into *out; else a
/// FlagError "FLAG TEXT: expected WHAT".
std::function<void(const std::string &)>
numberIn(const std::string &flag, double lo, double hi, bool openLow,
         const std::string &what, double *out) {
  return [=](const std::string &text) {
    double v = 0;
    if (!parseDouble(text, &v) || !(openLow ? v > lo : v >= lo) || v > hi)
      throw FlagError(flag + " " + text + ": expected " + what);
    *out = v;
  };
}

/// The flags that are not integers.
void declareOtherFlags(CommandLine &cl, GenerateArgs *a) {
  cl.value(
      "--prompt",
      [a](const std::string &v) { a->prompt = v, a->hasPrompt = true; },
      "the prompt text", "", "TEXT");
  const std::string idsError = ": expected token ids in 0.." +
                               std::to_string(kInt32Max) +
                               " separated by commas";
  cl.value(
      "--prompt-tokens",
      [a, idsError](const std::string &v) {
        if (!parseIdList(v, &a->promptTokens))
          throw FlagError("--prompt-tokens " + v + idsError);
        a->hasTokens = true;
      },
      "the prompt as token ids", "", "1,2,3", "--prompt-tokens " + idsError);
  constexpr double inf = std::numeric_limits<double>::infinity();
  cl.value("--temperature",
           numberIn("--temperature", 0, inf, false, "a number >= 0",
                    &a->temperature),
           "0 is greedy", "model", "T",
           "--temperature (nothing): expected a number >= 0");
  cl.value("--top-p", numberIn("--top-p", 0, 1, true, "a number in (0, 1]",
                               &a->topP),
           "nucleus sampling mass", "model", "P",
           "--top-p (nothing): expected a number in (0, 1]");
  cl.flag("--chat", &a->chat, "wrap the prompt in the model's chat template");
  cl.flag("--json", &a->json, "print one JSON object");
  cl.value("--logits-out", &a->logitsOut,
           "write the logits after the prompt", "FILE.npy");
  cl.value(
      "--profile",
      [a](const std::string &v) {
        if (v.empty())
          throw FlagError("--profile needs a value");
        a->profile = v;
      },
      "write a Chrome trace of every step and kernel", "", "TRACE.json");
  cl.value("--kv-cache-dtype", &a->kvCacheDtype,
           "KV-cache element type: auto, float32, bfloat16, int8 or fp8");
  cl.value("--batch-file", &a->batchFile, "one request per line", "IN.jsonl");
  cl.value("--output", &a->output, "batch: the results (- for stdout)",
           "OUT.jsonl");
  cl.value("--stats-json", &a->statsJson, "batch: the engine's counters",
           "FILE");
  cl.flag("--no-prefix-caching", &a->prefixCaching,
          "batch: do not share KV blocks between prompts", false);
}

/// The batch mode's usage checks; "" or the problem.
std::string batchArgsProblem(const GenerateArgs &a) {
  if (a.artifact.empty())
    return "give an artifact";
  if (a.hasPrompt || a.hasTokens)
    return "--batch-file replaces --prompt and --prompt-tokens";
  if (a.output.empty())
    return "--batch-file needs --output FILE (- for stdout)";
  if (a.kvBlocks && a.kvCacheMb)
    return "give at most one of --kv-blocks and --kv-cache-mb";
  if (a.json || !a.logitsOut.empty())
    return "--json and --logits-out are for a single prompt";
  return "";
}

/// The single-prompt mode's usage checks; "" or the problem.
std::string singlePromptArgsProblem(const GenerateArgs &a) {
  bool batchOnly = !a.output.empty() || !a.statsJson.empty() ||
                   a.kvCacheMb || a.blockSize || a.maxTokensPerStep ||
                   a.maxSeqs || !a.prefixCaching;
  if (batchOnly)
    return "--output, --stats-json, --kv-cache-mb, --block-size, "
           "--max-tokens-per-step, --max-seqs and --no-prefix-caching need "
           "--batch-file";
  if (a.artifact.empty() || a.hasPrompt == a.hasTokens)
    return "give an artifact and exactly one of --prompt and --prompt-tokens";
  if (a.chat && a.hasTokens)
    return "--chat formats a --prompt text; it cannot wrap --prompt-tokens";
  return "";
}

/// Returns 0 on success, -1 after --help, else the usage exit code.
int parseArgs(int argc, char **argv, GenerateArgs *a) {
  CommandLine cl("generate", "Generates text with an LLM artifact, from one "
                             "prompt or from every line of --batch-file.");
  cl.footer(kGenerateFooter);
  cl.positional("ART", &a->artifact, "the compiled LLM artifact");
  declareIntegerFlags(cl, a);
  declareOtherFlags(cl, a);
  declareDeviceFlags(cl, &a->device, &a->gpuMemoryFraction);
  declareWeightsFlag(cl, &a->weightsDir);
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc == 0 ? -1 : rc;
  std::string problem = a->batchFile.empty() ? singlePromptArgsProblem(*a)
                                             : batchArgsProblem(*a);
  return problem.empty() ? 0 : cl.usageError(problem);
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
  if (Status s = Artifact::open(a.artifact, &artifact, {a.weightsDir}); !s)
    return fail(s.message());
  std::unique_ptr<Generator> gen;
  if (Status s = Generator::create(*artifact, static_cast<unsigned>(a.threads),
                                   a.kvBlocks, &gen, a.kvCacheDtype);
      !s)
    return fail(s.message());
  std::string note;
  if (Status s = gen->useDevice(a.device, &note); !s)
    return fail(s.message());
  if (!note.empty())
    std::fprintf(stderr, "ingot: %s\n", note.c_str());
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
    OrderedJson out = {{"prompt_tokens", prompt},
                       {"tokens", result.tokens},
                       {"text", result.text},
                       {"finish_reason", result.finishReason},
                       {"ttft_ms", finiteOrNull(result.ttftMs)},
                       {"tpot_ms", finiteOrNull(result.tpotMs)}};
    std::printf("%s\n", jsonText(out).c_str());
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
