//===- OpenAiResponse.h - OpenAI response bodies ----------------*- C++ -*-===//
//
// The JSON the OpenAI API returns: completion and chat-completion objects,
// their streamed chunks, the usage chunk, /v1/models and error bodies. Token
// text may hold incomplete UTF-8 (a token can end inside a character); it is
// written with U+FFFD in place of the broken bytes, never refused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OpenAiRequest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::server {

/// What one choice produced, gathered from its token events.
struct ChoiceResult {
  std::string text;
  std::string finishReason; // OpenAI's: "stop", "length", "abort"
  std::vector<TokenEvent> tokens; // events that carried a token
  int64_t promptTokens = 0;
};

/// Identifies one response: "cmpl-…"/"chatcmpl-…", the Unix time, the model.
struct ResponseId {
  std::string id;
  int64_t created = 0;
  std::string model;
};

/// The engine's finish reason in OpenAI's words ("cancelled" is "abort").
std::string openAiFinishReason(const std::string &engineReason);

std::string completionBody(const CompletionRequest &request,
                           const ResponseId &rid,
                           const std::vector<ChoiceResult> &choices,
                           const Tokenizer &tokenizer);

/// One streamed chunk: `event`'s text (and log-probabilities), with the
/// finish reason when it is the choice's last. `firstOfChoice` makes a chat
/// chunk carry the assistant role.
std::string chunkBody(const CompletionRequest &request, const ResponseId &rid,
                      size_t choice, const TokenEvent &event,
                      bool firstOfChoice, const Tokenizer &tokenizer);

/// The closing chunk of stream_options.include_usage: no choices, usage.
std::string usageChunkBody(const CompletionRequest &request,
                           const ResponseId &rid, int64_t promptTokens,
                           int64_t completionTokens);

std::string errorBody(const ApiError &error);
std::string modelsBody(const std::vector<std::string> &names, int64_t created);

} // namespace ingot::server
