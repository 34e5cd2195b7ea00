//===- BenchWorkload.cpp - The requests `ingot bench` sends ---------------===//
//
// Synthetic prompts are random token ids, as vLLM's "random" dataset: the
// input length of each request is drawn uniformly from
// [N(1 − R), N(1 + R)] and its output length from [M(1 − R), M(1 + R)],
// and every synthetic request ignores EOS so it produces exactly that many
// tokens. A dataset file gives its own prompts and output lengths. The
// generator is seeded, so a workload is the same from run to run.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "JsonText.h"

#include "ingot/Tokenizer.h"

#include <cmath>
#include <fstream>

namespace ingot::cli::bench {
namespace {

uint64_t nextRandom(uint64_t *state) { // splitmix64
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Uniform in [lo, hi].
int64_t uniformInt(int64_t lo, int64_t hi, uint64_t *rng) {
  return lo + int64_t(nextRandom(rng) % uint64_t(hi - lo + 1));
}

std::string at(const std::string &file, int64_t line) {
  return file + ":" + std::to_string(line) + ": ";
}

/// One dataset line: {"prompt": str | "prompt_tokens": [ids],
/// "output_tokens": M}.
Status parseLine(const std::string &text, const std::string &where,
                 const Tokenizer &tokenizer, int64_t vocab, BenchRequest *r) {
  OrderedJson v;
  if (std::string error = parseJsonLine(text, &v); !error.empty())
    return Status::error(where + "invalid JSON: " + error);
  if (!v.is_object())
    return Status::error(where + "expected a JSON object");
  for (const auto &m : v.items())
    if (m.key() != "prompt" && m.key() != "prompt_tokens" &&
        m.key() != "output_tokens")
      return Status::error(where + "unknown key '" + m.key() +
                           "' (expected prompt or prompt_tokens, and "
                           "output_tokens)");
  auto find = [&v](const char *key) -> const OrderedJson * {
    auto it = v.find(key);
    return it == v.end() ? nullptr : &*it;
  };
  const OrderedJson *prompt = find("prompt"), *ids = find("prompt_tokens"),
                    *out = find("output_tokens");
  if (!prompt == !ids)
    return Status::error(where +
                         "give exactly one of 'prompt' and 'prompt_tokens'");
  if (prompt) {
    if (!prompt->is_string())
      return Status::error(where + "key 'prompt': expected a string");
    r->prompt = tokenizer.encode(prompt->get_ref<const std::string &>(),
                                 tokenizer.addBos());
  } else {
    if (!ids->is_array())
      return Status::error(where + "key 'prompt_tokens': expected a list");
    for (const OrderedJson &item : *ids) {
      std::optional<int64_t> id = exactInt64(item);
      if (!id || *id < 0 || *id >= vocab)
        return Status::error(where +
                             "key 'prompt_tokens': expected token ids in "
                             "[0, " +
                             std::to_string(vocab) + ")");
      r->prompt.push_back(int32_t(*id));
    }
  }
  if (r->prompt.empty())
    return Status::error(where + "the prompt is empty");
  std::optional<int64_t> outputLen = out ? exactInt64(*out) : std::nullopt;
  if (!outputLen || *outputLen < 1)
    return Status::error(where +
                         "key 'output_tokens': expected an integer >= 1");
  r->outputLen = *outputLen;
  return Status::ok();
}

Status readDataset(const BenchArgs &a, const Tokenizer &tokenizer,
                   int64_t vocab, std::vector<BenchRequest> *out) {
  std::ifstream in(a.dataset, std::ios::binary);
  if (!in)
    return Status::error("--dataset: cannot read " + a.dataset);
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos)
      continue;
    BenchRequest r;
    r.ignoreEos = a.ignoreEos;
    if (Status s = parseLine(line, at(a.dataset, n), tokenizer, vocab, &r); !s)
      return s;
    out->push_back(std::move(r));
  }
  if (in.bad())
    return Status::error("--dataset: cannot read " + a.dataset);
  if (out->empty())
    return Status::error("--dataset: " + a.dataset + " has no requests");
  return Status::ok();
}

} // namespace

std::vector<int32_t> randomTokens(int64_t n, int64_t vocab, uint64_t *rng) {
  std::vector<int32_t> ids(size_t(std::max<int64_t>(n, 0)));
  for (int32_t &id : ids)
    id = int32_t(nextRandom(rng) % uint64_t(vocab));
  return ids;
}

Status buildWorkload(const BenchArgs &a, const Manifest &m,
                     const Tokenizer &tokenizer,
                     std::vector<BenchRequest> *warmup,
                     std::vector<BenchRequest> *measured) {
  const int64_t vocab = m.llm.vocabSize;
  const int64_t context = m.llm.contextLength();
  int64_t total = a.numPrompts;
  std::vector<BenchRequest> all;
  if (!a.dataset.empty()) {
    std::vector<BenchRequest> lines;
    if (Status s = readDataset(a, tokenizer, vocab, &lines); !s)
      return s;
    if (total < 0)
      total = int64_t(lines.size());
    // Warm-up requests come first; the file is cycled when it is shorter.
    for (int64_t i = 0; i < a.warmup + total; ++i)
      all.push_back(lines[size_t(i) % lines.size()]);
  } else {
    if (total < 0)
      total = 100;
    auto range = [&](int64_t n, int64_t *lo, int64_t *hi) {
      *lo = std::max<int64_t>(1, int64_t(std::floor(n * (1 - a.rangeRatio))));
      *hi = std::max<int64_t>(*lo, int64_t(std::floor(n * (1 + a.rangeRatio))));
    };
    int64_t inLo, inHi, outLo, outHi;
    range(a.inputLen, &inLo, &inHi);
    range(a.outputLen, &outLo, &outHi);
    if (inHi + outHi > context)
      return Status::error(
          "--input-len " + std::to_string(a.inputLen) + " and --output-len " +
          std::to_string(a.outputLen) + " (with --range-ratio, up to " +
          std::to_string(inHi) + " + " + std::to_string(outHi) +
          " tokens) exceed the compiled context of " + std::to_string(context) +
          " tokens");
    uint64_t rng = a.seed;
    for (int64_t i = 0; i < a.warmup + total; ++i) {
      BenchRequest r;
      r.prompt = randomTokens(uniformInt(inLo, inHi, &rng), vocab, &rng);
      r.outputLen = uniformInt(outLo, outHi, &rng);
      r.ignoreEos = true;
      all.push_back(std::move(r));
    }
  }
  for (size_t i = 0; i < all.size(); ++i) {
    int64_t need = int64_t(all[i].prompt.size()) + all[i].outputLen;
    if (need > context)
      return Status::error("request " + std::to_string(i) + " needs " +
                           std::to_string(need) +
                           " tokens (prompt + output); the compiled context "
                           "holds " +
                           std::to_string(context));
  }
  warmup->assign(all.begin(), all.begin() + a.warmup);
  measured->assign(all.begin() + a.warmup, all.end());
  return Status::ok();
}

} // namespace ingot::cli::bench
