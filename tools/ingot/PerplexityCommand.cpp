//===- PerplexityCommand.cpp - `ingot perplexity` -------------------------===//
//
// Token-level perplexity of an LLM artifact over a text file, with the
// sliding-window method of Hugging Face's "Perplexity of fixed-length
// models": windows of `context` tokens start every `stride` tokens, each is
// run from position 0 on a fresh context, and scores only the tokens the
// previous window did not (the first window all but its first token, as
// a window's first token has nothing to be predicted from). The last window
// ends at the text's end. NLL_i = -log softmax(logits at i - 1)[token i],
// in double with a max-subtracted log-sum-exp; PPL = exp(mean NLL).
//
// PerplexityScorer.h runs the windows through the artifact's step.
//
//===----------------------------------------------------------------------===//
#include "CliChecks.h"
#include "CliNumbers.h"
#include "CliParser.h"
#include "Commands.h"
#include "JsonText.h"
#include "PerplexityScorer.h"

#include "ingot/Artifact.h"
#include "ingot/Tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace ingot::cli {
namespace {

struct PerplexityArgs {
  std::string artifact, textFile;
  std::string weightsDir; // --weights DIR (external weights)
  // Unset: the defaults. Their range checks need the artifact, so a value
  // out of range is an error (exit 1), not a usage error.
  std::optional<int64_t> context, stride;
  int64_t threads = 0, maxTokens = 0; // maxTokens 0: the whole text
  std::string kvCacheDtype = "auto";
  bool json = false;
};

/// Returns 0 to go on, -1 after --help, else the usage exit code 2.
int parseArgs(int argc, char **argv, PerplexityArgs *a) {
  CommandLine cl("perplexity",
                 "Perplexity of an LLM artifact over a text file, with "
                 "sliding windows.");
  cl.footer("Tokenizes FILE with the artifact's tokenizer (BOS first if the "
            "tokenizer adds one); each window scores only the tokens the "
            "previous one did not. Prints the perplexity, exp(mean NLL), or "
            "with --json one object {perplexity, nll_mean, tokens_scored, "
            "context, stride, windows, seconds, tokens_per_second}.");
  cl.positional("ART", &a->artifact, "the compiled LLM artifact");
  cl.value(
      "--text", [a](const std::string &v) { a->textFile = v; },
      "the text file to score", "", "FILE", "--text expects a file name");
  declareWeightsFlag(cl, &a->weightsDir);
  // The artifact's context bounds both (resolveWindowing); these ranges
  // only keep the numbers sane.
  cl.integer(
      "--context", [a](int64_t v) { a->context = v; }, 0, kMaxContext,
      "tokens per window", "min(512,compiled)");
  cl.integer(
      "--stride", [a](int64_t v) { a->stride = v; }, 0, kMaxContext,
      "tokens between window starts", "context/2");
  cl.integer("--max-tokens", &a->maxTokens, 2, int64_t(1) << 40,
             "keep the first N tokens of the text", "all");
  cl.integer("--threads", &a->threads, 0, kMaxThreads,
             "threads; 0: every core");
  cl.value("--kv-cache-dtype", &a->kvCacheDtype,
           "KV-cache element type: auto, float32, bfloat16, int8 or fp8");
  cl.flag("--json", &a->json, "print one JSON object");
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc == 0 ? -1 : rc;
  if (a->artifact.empty() || a->textFile.empty())
    return cl.usageError("give an artifact and --text FILE");
  return 0;
}
int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

Status readTextFile(const std::string &path, std::string *text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::error("--text " + path +
                         " is a directory; expected a text file");
  if (std::string e = nonRegularFileError("--text " + path, path); !e.empty())
    return Status::error(e);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("--text " + path + ": cannot open it (" +
                         std::strerror(errno) + ")");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad())
    return Status::error("--text " + path + ": cannot read it");
  *text = bytes.str();
  if (text->empty())
    return Status::error("--text " + path +
                         " is empty; expected some text to score");
  return Status::ok();
}

/// A bar redrawn in place on a terminal; otherwise a line per ~10%.
class Progress {
public:
  explicit Progress(int64_t total) : total_(total), tty_(isatty(2)) {}

  void update(int64_t done, int64_t scored, double nllSum, double seconds) {
    const int64_t tenth = done * 10 / total_;
    if (!tty_ && tenth == lastTenth_ && done != total_)
      return;
    lastTenth_ = tenth;
    const double ppl = scored ? std::exp(nllSum / double(scored)) : 0;
    const double eta =
        done ? seconds * double(total_ - done) / double(done) : 0;
    if (tty_) {
      const int width = 30, fill = int(width * done / total_);
      std::fprintf(stderr, "\r[%s%s] %lld/%lld windows, ppl %.4f, ETA %.0f s ",
                   std::string(fill, '#').c_str(),
                   std::string(width - fill, '.').c_str(),
                   static_cast<long long>(done), static_cast<long long>(total_),
                   ppl, eta);
      if (done == total_)
        std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "perplexity: %lld/%lld windows, ppl %.4f\n",
                   static_cast<long long>(done), static_cast<long long>(total_),
                   ppl);
    }
  }

private:
  int64_t total_, lastTenth_ = 0;
  bool tty_;
};

/// The context and stride to use, or an error naming the flag.
Status resolveWindowing(const PerplexityArgs &a, const LlmConfig &c,
                        int64_t *context, int64_t *stride) {
  const int64_t maxContext =
      std::min(c.maxPositions, c.maxBlocksPerSeq * c.blockSize);
  *context = a.context.value_or(std::min<int64_t>(512, maxContext));
  if (*context > maxContext)
    return Status::error("--context " + std::to_string(*context) +
                         " exceeds the context of " +
                         std::to_string(maxContext) + " tokens " + a.artifact +
                         " was compiled for (--max-context)");
  if (*context < 2) // a 1-token window predicts nothing
    return Status::error((a.context
                              ? "--context " + std::to_string(*context)
                              : a.artifact + " was compiled for a context of " +
                                    std::to_string(maxContext) + " tokens") +
                         "; expected a context of at least 2 tokens");
  *stride = a.stride.value_or(std::max<int64_t>(1, *context / 2));
  if (*stride < 1 || *stride > *context)
    return Status::error("--stride " + std::to_string(*stride) +
                         ": expected 1 to the context (" +
                         std::to_string(*context) + " tokens)");
  return Status::ok();
}

} // namespace

int perplexityMain(int argc, char **argv) {
  PerplexityArgs a;
  if (int rc = parseArgs(argc, argv, &a))
    return rc < 0 ? 0 : rc;
  std::string text;
  if (Status s = readTextFile(a.textFile, &text); !s)
    return fail(s.message());
  std::unique_ptr<Artifact> artifact;
  if (Status s = Artifact::open(a.artifact, &artifact, {a.weightsDir}); !s)
    return fail(s.message());
  const Manifest &m = artifact->manifest();
  if (!m.hasLlm)
    return fail(a.artifact + ": not an LLM artifact (compiled from an ONNX "
                             "graph); `ingot perplexity` needs a language "
                             "model");
  int64_t context = 0, stride = 0;
  if (Status s = resolveWindowing(a, m.llm, &context, &stride); !s)
    return fail(s.message());
  std::unique_ptr<Tokenizer> tokenizer;
  if (Status s = Tokenizer::create(m.tokenizer, &tokenizer); !s)
    return fail(a.artifact + ": tokenizer: " + s.message());

  std::vector<int32_t> ids = tokenizer->encode(text, tokenizer->addBos());
  if (a.maxTokens && int64_t(ids.size()) > a.maxTokens)
    ids.resize(size_t(a.maxTokens));
  if (ids.size() < 2)
    return fail("--text " + a.textFile + " is " + std::to_string(ids.size()) +
                " token long; perplexity needs at least 2 tokens");
  for (int32_t id : ids)
    if (id < 0 || id >= m.llm.vocabSize)
      return fail(a.artifact + ": its tokenizer gave token " +
                  std::to_string(id) + ", outside the model's vocabulary of " +
                  std::to_string(m.llm.vocabSize));

  const std::vector<Window> windows =
      planWindows(int64_t(ids.size()), context, stride);
  WindowScorer scorer(*artifact, unsigned(a.threads));
  if (Status s = scorer.init(context, a.kvCacheDtype); !s)
    return fail(a.artifact + ": " + s.message());
  Progress progress(int64_t(windows.size()));
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  double nllSum = 0;
  int64_t scored = 0;
  for (size_t i = 0; i < windows.size(); ++i) {
    if (Status s = scorer.score(ids, windows[i], &nllSum); !s)
      return fail(a.artifact + ": " + s.message());
    scored += windows[i].end - windows[i].firstScored;
    progress.update(int64_t(i + 1), scored, nllSum, elapsed());
  }
  const double seconds = elapsed();
  const double nllMean = nllSum / double(scored);
  const double ppl = std::exp(nllMean);
  const double rate = seconds > 0 ? double(scored) / seconds : 0;

  if (a.json) {
    OrderedJson out = {{"perplexity", finiteOrNull(ppl)},
                       {"nll_mean", finiteOrNull(nllMean)},
                       {"tokens_scored", scored},
                       {"context", context},
                       {"stride", stride},
                       {"windows", windows.size()},
                       {"seconds", finiteOrNull(seconds)},
                       {"tokens_per_second", finiteOrNull(rate)}};
    std::printf("%s\n", jsonText(out).c_str());
  } else {
    std::printf("perplexity %.3f over %lld tokens (context %lld, stride "
                "%lld), %.1f s, %.0f tokens/s\n",
                ppl, static_cast<long long>(scored),
                static_cast<long long>(context), static_cast<long long>(stride),
                seconds, rate);
  }
  return 0;
}

} // namespace ingot::cli
