//===- GenerateCommand.cpp - `ingot generate` -----------------------------===//
#include "BatchGenerate.h"
#include "Commands.h"
#include "JsonWriter.h"
#include "ProfileOutput.h"

#include "ingot/Artifact.h"
#include "ingot/Generator.h"
#include "ingot/Npy.h"
#include "ingot/Profiler.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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
      "  one line per request, in input order.\n"
      "  --profile writes a Chrome trace of every step and kernel (open it\n"
      "  in ui.perfetto.dev) and prints the top 15 kernels to stderr; it\n"
      "  works in both modes.\n");
}

bool parseInt(const std::string &s, int64_t *out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno)
    return false;
  *out = v;
  return true;
}

bool parseDouble(const std::string &s, double *out) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !std::isfinite(v))
    return false;
  *out = v;
  return true;
}

bool parseIdList(const std::string &s, std::vector<int32_t> *ids) {
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    int64_t v;
    if (!parseInt(s.substr(pos, comma - pos), &v) || v < INT32_MIN ||
        v > INT32_MAX)
      return false;
    ids->push_back(static_cast<int32_t>(v));
    if (comma == std::string::npos)
      return true;
    pos = comma + 1;
  }
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

/// Returns 0 on success, else the exit code for a usage error.
int parseArgs(int argc, char **argv, GenerateArgs *a) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&](std::string *v) {
      if (i + 1 >= argc)
        return false;
      *v = argv[++i];
      return true;
    };
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
      ok = next(&v) && parseIdList(v, &a->promptTokens);
      a->hasTokens = true;
    } else if (arg == "--max-new-tokens") {
      ok = next(&v) && parseInt(v, &a->maxNewTokens) && a->maxNewTokens >= 0;
    } else if (arg == "--temperature") {
      ok = next(&v) && parseDouble(v, &a->temperature) && a->temperature >= 0;
    } else if (arg == "--top-k") {
      ok = next(&v) && parseInt(v, &a->topK) && a->topK >= 0;
    } else if (arg == "--top-p") {
      ok = next(&v) && parseDouble(v, &a->topP) && a->topP > 0 && a->topP <= 1;
    } else if (arg == "--seed") {
      ok = next(&v) && parseInt(v, &a->seed);
    } else if (arg == "--threads") {
      ok = next(&v) && parseInt(v, &a->threads) && a->threads >= 0;
    } else if (arg == "--kv-blocks") {
      ok = next(&v) && parseInt(v, &a->kvBlocks) && a->kvBlocks > 0;
    } else if (arg == "--kv-cache-dtype") {
      ok = next(&a->kvCacheDtype);
    } else if (arg == "--kv-cache-mb") {
      ok = next(&v) && parseInt(v, &a->kvCacheMb) && a->kvCacheMb > 0;
    } else if (arg == "--block-size") {
      ok = next(&v) && parseInt(v, &a->blockSize) && a->blockSize > 0;
    } else if (arg == "--max-tokens-per-step") {
      ok = next(&v) && parseInt(v, &a->maxTokensPerStep) &&
           a->maxTokensPerStep > 0;
    } else if (arg == "--max-seqs") {
      ok = next(&v) && parseInt(v, &a->maxSeqs) && a->maxSeqs > 0;
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
      std::fprintf(stderr, "error: bad or missing value for %s\n", arg.c_str());
      return 2;
    }
  }
  if (!a->batchFile.empty())
    return checkBatchArgs(*a);
  bool batchOnly = !a->output.empty() || !a->statsJson.empty() ||
                   a->kvCacheMb || a->blockSize || a->maxTokensPerStep ||
                   a->maxSeqs || !a->prefixCaching;
  if (batchOnly) {
    std::fprintf(stderr, "error: --output, --stats-json, --kv-cache-mb, "
                         "--block-size, --max-tokens-per-step, --max-seqs "
                         "and --no-prefix-caching need --batch-file\n");
    return 2;
  }
  if (a->artifact.empty() || a->hasPrompt == a->hasTokens) {
    std::fprintf(stderr, "error: give an artifact and exactly one of --prompt "
                         "and --prompt-tokens\n\n");
    printGenerateUsage();
    return 2;
  }
  if (a->chat && a->hasTokens) {
    std::fprintf(stderr, "error: --chat formats a --prompt text; it cannot "
                         "wrap --prompt-tokens\n");
    return 2;
  }
  return 0;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

} // namespace

int generateMain(int argc, char **argv) {
  GenerateArgs a;
  if (int rc = parseArgs(argc, argv, &a))
    return rc < 0 ? 0 : rc;
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
  options.sampling.topK = a.topK >= 0 ? a.topK : defaults.topK;
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
