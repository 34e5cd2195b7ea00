//===- BatchLineParser.cpp - One line of `generate --batch-file` ----------===//
//
// A line that cannot be used (a wrong type, a value out of range, an
// unknown key) gets the error, naming the key; the integer sampling keys
// accept exactly what their flags accept (BatchGenerate.h's ranges).
//
//===----------------------------------------------------------------------===//
#include "BatchLineParser.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace ingot::cli {
namespace {

/// Reads the keys of one line into `r->params`; returns "" or the error
/// (naming the key).
class LineParser {
public:
  LineParser(const OrderedJson &v, const GenerateArgs &args,
             const GenerationDefaults &defaults, const Tokenizer &tokenizer,
             int64_t vocab)
      : v_(v), args_(args), defaults_(defaults), tokenizer_(tokenizer),
        vocab_(vocab) {}

  std::string parse(RequestParams *r) {
    if (!v_.is_object())
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
    for (const auto &m : v_.items()) {
      bool ok = false;
      for (const char *k : known)
        ok |= m.key() == k;
      if (!ok)
        return "unknown key '" + m.key() + "'";
    }
    const OrderedJson *text = find("prompt"), *ids = find("prompt_tokens");
    if (!text == !ids)
      return "give exactly one of 'prompt' and 'prompt_tokens'";
    if (ids && !intList("prompt_tokens", *ids, &r->promptTokens))
      return error_;
    if (text) {
      if (!text->is_string())
        return "key 'prompt': expected a string";
      const std::string &prompt = text->get_ref<const std::string &>();
      std::string formatted = prompt;
      if (args_.chat)
        if (Status s = tokenizer_.applyChatTemplate({{"user", prompt}},
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
    s.topP = args_.topP > 0 ? args_.topP : defaults_.topP;
    int64_t seed = args_.seed, topK = args_.topK.value_or(defaults_.topK);
    r->maxNewTokens =
        args_.maxNewTokens >= 0 ? args_.maxNewTokens : defaults_.maxNewTokens;
    constexpr double inf = std::numeric_limits<double>::infinity();
    bool ok = integer(kMaxNewTokensRange, &r->maxNewTokens) &&
              number("temperature", 0, inf, false, &s.temperature) &&
              integer(kTopKRange, &topK) &&
              number("top_p", 0, 1, true, &s.topP) &&
              number("min_p", 0, 1, false, &s.minP) &&
              number("repetition_penalty", 0, inf, true,
                     &s.repetitionPenalty) &&
              number("presence_penalty", -2, 2, false, &s.presencePenalty) &&
              number("frequency_penalty", -2, 2, false, &s.frequencyPenalty) &&
              integer(kSeedRange, &seed);
    if (!ok)
      return error_;
    s.topK = topKForEngine(topK);
    s.seed = static_cast<uint64_t>(seed);
    if (const OrderedJson *stop = find("stop")) {
      if (stop->is_string()) {
        r->stopStrings.push_back(stop->get<std::string>());
      } else if (stop->is_array()) {
        for (const OrderedJson &item : *stop) {
          if (!item.is_string() || item.get_ref<const std::string &>().empty())
            return "key 'stop': expected a list of non-empty strings";
          r->stopStrings.push_back(item.get<std::string>());
        }
      } else {
        return "key 'stop': expected a string or a list of strings";
      }
    }
    if (const OrderedJson *stopIds = find("stop_token_ids"))
      if (!intList("stop_token_ids", *stopIds, &r->stopTokenIds))
        return error_;
    if (const OrderedJson *b = find("ignore_eos")) {
      if (!b->is_boolean())
        return "key 'ignore_eos': expected true or false";
      r->ignoreEos = b->get<bool>();
    }
    return "";
  }

private:
  const OrderedJson *find(const char *key) const {
    auto it = v_.find(key);
    return it == v_.end() ? nullptr : &*it;
  }

  bool err(const std::string &key, const std::string &what) {
    error_ = "key '" + key + "': " + what;
    return false;
  }

  /// A number in [lo, hi] (lo excluded when openLow).
  bool number(const char *key, double lo, double hi, bool openLow,
              double *out) {
    const OrderedJson *v = find(key);
    if (!v)
      return true;
    if (!v->is_number())
      return err(key,
                 std::string("expected a number, got ") + jsonKindName(*v));
    const double x = v->get<double>();
    bool ok = (openLow ? x > lo : x >= lo) && x <= hi;
    if (!ok) {
      std::ostringstream range;
      range << (openLow ? "(" : "[") << lo << ", " << hi
            << (std::isinf(hi) ? ")" : "]");
      std::ostringstream got;
      got << x;
      return err(key, "must be in " + range.str() + ", got " + got.str());
    }
    *out = x;
    return true;
  }

  /// The key of `range`, in its range (the same one as the flag's).
  bool integer(const SamplingIntRange &range, int64_t *out) {
    const char *key = range.key;
    const int64_t lo = range.min, hi = range.max;
    const OrderedJson *v = find(key);
    if (!v)
      return true;
    if (!v->is_number())
      return err(key, "expected an integer");
    const double number = v->get<double>();
    if (number != std::floor(number))
      return err(key, "expected an integer");
    std::string inRange =
        "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    int64_t x; // 1e3 is an integer too, just not written as one
    if (std::optional<int64_t> exact = exactInt64(*v))
      x = *exact;
    else if (std::fabs(number) < 0x1p63)
      x = static_cast<int64_t>(number);
    else
      return err(key, inRange);
    if (x < lo || x > hi)
      return err(key, inRange + ", got " + std::to_string(x));
    *out = x;
    return true;
  }

  bool intList(const char *key, const OrderedJson &v,
               std::vector<int32_t> *out) {
    if (!v.is_array())
      return err(key, "expected a list of token ids");
    for (const OrderedJson &item : v) {
      std::optional<int64_t> id = exactInt64(item);
      if (!id)
        return err(key, "expected a list of integer token ids");
      if (*id < 0 || *id >= vocab_)
        return err(key, "token " + std::to_string(*id) +
                            " is outside the vocabulary [0, " +
                            std::to_string(vocab_) + ")");
      out->push_back(static_cast<int32_t>(*id));
    }
    return true;
  }

  const OrderedJson &v_;
  const GenerateArgs &args_;
  const GenerationDefaults &defaults_;
  const Tokenizer &tokenizer_;
  int64_t vocab_;
  std::string error_;
};

} // namespace

std::string parseBatchLine(const OrderedJson &line, const GenerateArgs &args,
                           const GenerationDefaults &defaults,
                           const Tokenizer &tokenizer, int64_t vocab,
                           RequestParams *r) {
  return LineParser(line, args, defaults, tokenizer, vocab).parse(r);
}

} // namespace ingot::cli
