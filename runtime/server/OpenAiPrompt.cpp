//===- OpenAiPrompt.cpp - Prompts, log-probabilities and token budgets ----===//
//
// /v1/completions takes a string, a list of strings, a list of token ids or
// a list of such lists (one choice each); /v1/chat/completions takes
// messages, formatted with the artifact's chat template. A prompt that
// leaves no room in the context, or a max_tokens that does not fit after
// it, is refused as OpenAI does (code context_length_exceeded) instead of
// being cut short.
//
//===----------------------------------------------------------------------===//
#include "OpenAiFields.h"

namespace ingot::server {

using json = nlohmann::json;
using namespace fields;

namespace {

std::vector<int32_t> tokenIds(const json &ids, const ModelInfo &model) {
  std::vector<int32_t> out;
  for (const json &id : ids) {
    if (!id.is_number_integer())
      refuse("prompt", "a token-id prompt must hold integers only");
    int64_t v = id.get<int64_t>();
    if (v < 0 || v >= model.vocab)
      refuse("prompt", "prompt token " + std::to_string(v) +
                           " is outside the vocabulary [0, " +
                           std::to_string(model.vocab) + ")");
    out.push_back(int32_t(v));
  }
  return out;
}

std::vector<int32_t> encodeText(const std::string &text,
                                const ModelInfo &model) {
  return model.tokenizer->encode(text, model.tokenizer->addBos());
}

std::vector<std::vector<int32_t>> completionPrompts(const json &body,
                                                    const ModelInfo &model) {
  const json *p = find(body, "prompt");
  if (!p)
    refuse("prompt", "'prompt' is required");
  std::vector<std::vector<int32_t>> prompts;
  if (p->is_string()) {
    prompts.push_back(encodeText(p->get<std::string>(), model));
  } else if (p->is_array() && !p->empty() && (*p)[0].is_number()) {
    prompts.push_back(tokenIds(*p, model));
  } else if (p->is_array() && !p->empty()) {
    for (const json &item : *p) {
      if (item.is_string())
        prompts.push_back(encodeText(item.get<std::string>(), model));
      else if (item.is_array())
        prompts.push_back(tokenIds(item, model));
      else
        refuse("prompt", "'prompt' lists must hold strings or token-id lists");
    }
  } else {
    refuse("prompt", "'prompt' must be a string, a list of strings, or token "
                     "ids (a non-empty list)");
  }
  if (prompts.size() > 64)
    refuse("prompt", "'prompt' lists " + std::to_string(prompts.size()) +
                         " prompts; at most 64 per request");
  for (const auto &ids : prompts)
    if (ids.empty())
      refuse("prompt", "a prompt is empty");
  return prompts;
}

std::string messageContent(const json &msg, size_t index) {
  const std::string where = "messages[" + std::to_string(index) + "].content";
  const json *c = find(msg, "content");
  if (!c)
    return "";
  if (c->is_string())
    return c->get<std::string>();
  if (!c->is_array())
    refuse(where, "'" + where + "' must be a string or a list of text parts");
  std::string text;
  for (const json &part : *c) {
    const json *type = part.is_object() ? find(part, "type") : nullptr;
    const json *t = part.is_object() ? find(part, "text") : nullptr;
    if (!type || *type != "text" || !t || !t->is_string())
      refuse(where, "only text content parts are supported in '" + where +
                        "'");
    text += t->get<std::string>();
  }
  return text;
}

std::vector<int32_t> chatPrompt(const json &body, const ModelInfo &model) {
  const json *msgs = find(body, "messages");
  if (!msgs || !msgs->is_array() || msgs->empty())
    refuse("messages", "'messages' must be a non-empty list");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < msgs->size(); ++i) {
    const json &m = (*msgs)[i];
    const json *role = m.is_object() ? find(m, "role") : nullptr;
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!role || !role->is_string())
      refuse(where + ".role", "'" + where + "' needs a string 'role'");
    std::string r = role->get<std::string>();
    if (r == "developer") // OpenAI's newer name for the system role
      r = "system";
    if (r != "system" && r != "user" && r != "assistant")
      refuse(where + ".role", "role '" + r + "' is not one of system, "
                              "developer, user, assistant");
    messages.push_back({r, messageContent(m, i)});
  }
  std::string text;
  if (Status s = model.tokenizer->applyChatTemplate(messages, true, &text); !s)
    refuse("messages", s.message());
  return model.tokenizer->encode(text, false); // the template writes BOS
}

/// -1 = none, else how many alternatives each token reports.
int32_t logprobsWanted(const json &body, bool chat) {
  if (!chat)
    return int32_t(integer(body, "logprobs", -1, 0, 5));
  const bool on = boolean(body, "logprobs", false);
  const int64_t top = integer(body, "top_logprobs", -1, 0, 20);
  if (top >= 0 && !on)
    refuse("top_logprobs", "top_logprobs needs logprobs = true");
  return on ? int32_t(std::max<int64_t>(top, 0)) : -1;
}

int64_t tokenBudget(const json &body, bool chat, const ModelInfo &model,
                    size_t promptTokens) {
  const char *promptParam = chat ? "messages" : "prompt";
  const int64_t room = model.context - int64_t(promptTokens);
  if (room <= 0)
    refuse(promptParam, "the prompt has " + std::to_string(promptTokens) +
                            " tokens; this model's context holds " +
                            std::to_string(model.context) +
                            " (prompt and output together)",
           "context_length_exceeded");
  const char *param =
      find(body, "max_completion_tokens") ? "max_completion_tokens"
                                          : "max_tokens";
  // OpenAI's default for completions is 16 tokens; chat runs to the end of
  // the context (or a stop).
  const int64_t asked = integer(body, param, -1, 1, int64_t(1) << 40);
  if (asked < 0)
    return chat ? room : std::min<int64_t>(16, room);
  if (asked > room)
    refuse(param, "'" + std::string(param) + "' is " + std::to_string(asked) +
                      " but the prompt leaves room for " +
                      std::to_string(room) + " tokens in this model's " +
                      std::to_string(model.context) + "-token context",
           "context_length_exceeded");
  return asked;
}

} // namespace

void fillChoices(const json &body, bool chat, const ModelInfo &model,
                 const RequestParams &common, CompletionRequest *out) {
  std::vector<std::vector<int32_t>> prompts;
  if (chat)
    prompts.push_back(chatPrompt(body, model));
  else
    prompts = completionPrompts(body, model);
  const int32_t logprobs = logprobsWanted(body, chat);
  for (std::vector<int32_t> &ids : prompts) {
    RequestParams p = common;
    p.maxNewTokens = tokenBudget(body, chat, model, ids.size());
    p.promptTokens = std::move(ids);
    p.logprobs = logprobs;
    out->choices.push_back(std::move(p));
  }
}

} // namespace ingot::server
