//===- OpenAiResponse.cpp - OpenAI response bodies ------------------------===//
#include "OpenAiResponse.h"

#include <nlohmann/json.hpp>

namespace ingot::server {

using json = nlohmann::json;

namespace {

std::string dump(const json &j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json usage(int64_t prompt, int64_t completion) {
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion}};
}

/// How a log-probability entry names a token.
struct TokenNamer {
  const Tokenizer &tok;
  bool asIds;
  std::string bytes(int32_t id) const { return tok.tokenBytes(id); }
  std::string name(int32_t id) const {
    return asIds ? "token_id:" + std::to_string(id) : tok.tokenBytes(id);
  }
};

json bytesOf(const std::string &s) {
  json b = json::array();
  for (unsigned char c : s)
    b.push_back(int(c));
  return b;
}

/// Chat logprobs: {"content": [{token, logprob, bytes, top_logprobs}]}.
json chatLogprobs(const std::vector<const TokenEvent *> &events,
                  const TokenNamer &tok) {
  json content = json::array();
  for (const TokenEvent *e : events) {
    json top = json::array();
    for (const TokenLogprob &alt : e->topLogprobs)
      top.push_back({{"token", tok.name(alt.token)},
                     {"logprob", alt.logprob},
                     {"bytes", bytesOf(tok.bytes(alt.token))}});
    content.push_back({{"token", tok.name(e->token)},
                       {"logprob", e->logprob},
                       {"bytes", bytesOf(tok.bytes(e->token))},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

/// Completions logprobs: parallel lists, top alternatives as objects.
json completionLogprobs(const std::vector<const TokenEvent *> &events,
                        const TokenNamer &tok, int64_t textOffset) {
  json tokens = json::array(), lps = json::array(), tops = json::array(),
       offsets = json::array();
  for (const TokenEvent *e : events) {
    tokens.push_back(tok.name(e->token));
    lps.push_back(e->logprob);
    json top = json::object();
    for (const TokenLogprob &alt : e->topLogprobs)
      top[tok.name(alt.token)] = alt.logprob;
    tops.push_back(top);
    offsets.push_back(textOffset);
    textOffset += int64_t(tok.bytes(e->token).size());
  }
  return {{"tokens", tokens}, {"token_logprobs", lps},
          {"top_logprobs", tops}, {"text_offset", offsets}};
}

json logprobsOf(const CompletionRequest &request,
                const std::vector<const TokenEvent *> &events,
                const Tokenizer &tok, int64_t textOffset) {
  if (events.empty() || !events.front()->hasLogprob)
    return nullptr;
  TokenNamer namer{tok, request.tokensAsIds};
  return request.chat ? chatLogprobs(events, namer)
                      : completionLogprobs(events, namer, textOffset);
}

const char *objectName(const CompletionRequest &r, bool chunk) {
  if (!r.chat)
    return "text_completion";
  return chunk ? "chat.completion.chunk" : "chat.completion";
}

} // namespace

std::string openAiFinishReason(const std::string &engineReason) {
  if (engineReason == "cancelled")
    return "abort";
  return engineReason;
}

std::string completionBody(const CompletionRequest &request,
                           const ResponseId &rid,
                           const std::vector<ChoiceResult> &choices,
                           const Tokenizer &tokenizer) {
  json list = json::array();
  int64_t prompt = 0, completion = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceResult &c = choices[i];
    std::vector<const TokenEvent *> events;
    for (const TokenEvent &e : c.tokens)
      events.push_back(&e);
    json choice = {{"index", i},
                   {"logprobs", logprobsOf(request, events, tokenizer, 0)},
                   {"finish_reason", c.finishReason}};
    if (request.chat)
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    else
      choice["text"] = c.text;
    list.push_back(choice);
    prompt += c.promptTokens;
    completion += int64_t(c.tokens.size());
  }
  json body = {{"id", rid.id},         {"object", objectName(request, false)},
               {"created", rid.created}, {"model", rid.model},
               {"choices", list},      {"usage", usage(prompt, completion)}};
  return dump(body);
}

std::string chunkBody(const CompletionRequest &request, const ResponseId &rid,
                      size_t choice, const TokenEvent &event,
                      bool firstOfChoice, const Tokenizer &tokenizer) {
  std::vector<const TokenEvent *> events;
  if (event.token >= 0)
    events.push_back(&event);
  json c = {{"index", choice},
            {"logprobs", logprobsOf(request, events, tokenizer, 0)},
            {"finish_reason", event.finished
                                  ? json(openAiFinishReason(event.finishReason))
                                  : json(nullptr)}};
  if (request.chat) {
    json delta = {{"content", event.text}};
    if (firstOfChoice)
      delta["role"] = "assistant";
    c["delta"] = delta;
  } else {
    c["text"] = event.text;
  }
  json body = {{"id", rid.id},           {"object", objectName(request, true)},
               {"created", rid.created}, {"model", rid.model},
               {"choices", json::array({c})}};
  if (request.includeUsage)
    body["usage"] = nullptr; // OpenAI: null on every chunk but the last
  return dump(body);
}

std::string usageChunkBody(const CompletionRequest &request,
                           const ResponseId &rid, int64_t promptTokens,
                           int64_t completionTokens) {
  json body = {{"id", rid.id},
               {"object", objectName(request, true)},
               {"created", rid.created},
               {"model", rid.model},
               {"choices", json::array()},
               {"usage", usage(promptTokens, completionTokens)}};
  return dump(body);
}

std::string errorBody(const ApiError &e) {
  json err = {{"message", e.message},
              {"type", e.type},
              {"param", e.param.empty() ? json(nullptr) : json(e.param)},
              {"code", e.code.empty() ? json(nullptr) : json(e.code)}};
  return dump(json{{"error", err}});
}

std::string modelsBody(const std::vector<std::string> &names,
                       int64_t created) {
  json data = json::array();
  for (const std::string &n : names)
    data.push_back({{"id", n}, {"object", "model"}, {"created", created},
                    {"owned_by", "ingot"}});
  return dump(json{{"object", "list"}, {"data", data}});
}

} // namespace ingot::server
