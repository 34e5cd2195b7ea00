//===- OpenAiRequest.cpp - OpenAI request bodies to engine requests -------===//
#include "OpenAiRequest.h"

#include "OpenAiFields.h"

#include <limits>

namespace ingot::server {

using json = nlohmann::json;
using namespace fields;

// OpenAiPrompt.cpp: the prompt forms, logprobs and the token budget.
void fillChoices(const json &body, bool chat, const ModelInfo &model,
                 const RequestParams &common, CompletionRequest *out);

namespace {

std::vector<std::string> stopStrings(const json &body) {
  const json *f = find(body, "stop");
  if (!f)
    return {};
  std::vector<std::string> stops;
  if (f->is_string())
    stops.push_back(f->get<std::string>());
  else if (f->is_array())
    for (const json &s : *f) {
      if (!s.is_string())
        refuse("stop", "'stop' must be a string or a list of strings");
      stops.push_back(s.get<std::string>());
    }
  else
    refuse("stop", "'stop' must be a string or a list of strings");
  if (stops.size() > 16)
    refuse("stop", "'stop' lists " + std::to_string(stops.size()) +
                       " strings; at most 16");
  for (const std::string &s : stops)
    if (s.empty())
      refuse("stop", "a stop string is empty");
  return stops;
}

/// Known OpenAI fields ingot does not implement: refused, never ignored.
void refuseUnsupported(const json &body) {
  if (integer(body, "n", 1, 1, 1 << 20) != 1)
    refuse("n", "only n = 1 is supported");
  if (integer(body, "best_of", 1, 1, 1 << 20) != 1)
    refuse("best_of", "only best_of = 1 is supported");
  if (boolean(body, "echo", false))
    refuse("echo", "echo is not supported");
  if (const json *f = find(body, "suffix");
      f && !(f->is_string() && f->get<std::string>().empty()))
    refuse("suffix", "suffix is not supported");
  if (const json *f = find(body, "logit_bias");
      f && !(f->is_object() && f->empty()))
    refuse("logit_bias", "logit_bias is not supported");
  for (const char *name : {"tools", "functions"})
    if (const json *f = find(body, name); f && !(f->is_array() && f->empty()))
      refuse(name, std::string(name) + " (function calling) is not supported");
  if (const json *f = find(body, "response_format")) {
    const json *type = f->is_object() ? find(*f, "type") : nullptr;
    if (!type || *type != "text")
      refuse("response_format",
             "only response_format {\"type\": \"text\"} is supported");
  }
}

SamplingParams samplingParams(const json &body) {
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
  constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
  SamplingParams s;
  s.temperature = number(body, "temperature", 1.0, 0, 2);
  s.topP = number(body, "top_p", 1.0, 0, 1, /*loOpen=*/true);
  int64_t topK = integer(body, "top_k", 0, -1, kInt32Max);
  s.topK = topK < 0 ? 0 : topK; // vLLM spells "off" -1, ingot 0
  s.minP = number(body, "min_p", 0, 0, 1);
  s.presencePenalty = number(body, "presence_penalty", 0, -2, 2);
  s.frequencyPenalty = number(body, "frequency_penalty", 0, -2, 2);
  s.repetitionPenalty =
      number(body, "repetition_penalty", 1, 0, 100, /*loOpen=*/true);
  s.seed = uint64_t(integer(body, "seed", 0, kInt64Min, kInt64Max));
  return s;
}

void readModel(const json &body, const ModelInfo &model, std::string *out) {
  const json *m = find(body, "model");
  if (!m) {
    *out = model.names.front();
    return;
  }
  if (!m->is_string())
    refuse("model", std::string("'model' must be a string, not ") +
                        m->type_name());
  *out = m->get<std::string>();
  for (const std::string &n : model.names)
    if (n == *out)
      return;
  refuse("model", "the model '" + *out + "' does not exist; this server "
                  "serves '" + model.names.front() + "'",
         "model_not_found");
}

void readStreamFlags(const json &body, CompletionRequest *out) {
  out->stream = boolean(body, "stream", false);
  const json *so = find(body, "stream_options");
  if (!so)
    return;
  if (!out->stream)
    refuse("stream_options", "stream_options needs stream = true");
  if (!so->is_object())
    refuse("stream_options", "'stream_options' must be an object");
  out->includeUsage = boolean(*so, "include_usage", false);
}

} // namespace

int jsonNestingDepth(const std::string &text) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

bool parseCompletionRequest(const std::string &body, bool chat,
                            const ModelInfo &model, CompletionRequest *out,
                            ApiError *error) {
  try {
    if (jsonNestingDepth(body) > kMaxJsonDepth)
      refuse("", "the request body nests deeper than " +
                     std::to_string(kMaxJsonDepth) + " levels");
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
      refuse("", "the request body is not valid JSON");
    if (!j.is_object())
      refuse("", "the request body must be a JSON object");
    *out = CompletionRequest();
    out->chat = chat;
    readModel(j, model, &out->model);
    refuseUnsupported(j);
    readStreamFlags(j, out);
    RequestParams common;
    common.sampling = samplingParams(j);
    common.stopStrings = stopStrings(j);
    common.ignoreEos = boolean(j, "ignore_eos", false);
    out->tokensAsIds = boolean(j, "return_tokens_as_token_ids", false);
    fillChoices(j, chat, model, common, out);
    return true;
  } catch (const RequestRefused &r) {
    *error = r.error;
    return false;
  }
}

} // namespace ingot::server
