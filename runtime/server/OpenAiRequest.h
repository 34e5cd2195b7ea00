//===- OpenAiRequest.h - OpenAI request bodies to engine requests -*- C++ -*-===//
//
// Parses and checks the JSON body of /v1/completions and /v1/chat/completions
// before anything reaches the engine, so that every refusal is a 400 whose
// error names the offending field (OpenAI's `param`). Unknown field names are
// ignored, as OpenAI's and vLLM's servers do; a known field with the wrong
// type or an out-of-range value, or a feature ingot does not implement
// (n > 1, echo, logit_bias, tools), is refused rather than silently dropped.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Engine.h"
#include "ingot/Tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::server {

/// An OpenAI-style error: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param; // empty = null
  std::string code;  // empty = null
};

/// What request checking needs to know of the served model.
struct ModelInfo {
  std::vector<std::string> names; // the first is reported by /v1/models
  const Tokenizer *tokenizer = nullptr;
  int64_t context = 0; // tokens one sequence holds, prompt and output
  int32_t vocab = 0;
};

struct CompletionRequest {
  bool chat = false;
  bool stream = false;
  bool includeUsage = false; // stream_options.include_usage
  /// vLLM's return_tokens_as_token_ids: log-probability entries name tokens
  /// "token_id:N", which survives tokens that are not whole UTF-8.
  bool tokensAsIds = false;
  std::string model;
  /// One engine request per choice: completions may list several prompts.
  std::vector<RequestParams> choices;
};

/// Deeper JSON than this is refused before parsing (no recursion risk).
constexpr int kMaxJsonDepth = 64;

/// Fills `out` or returns false with `error` set.
bool parseCompletionRequest(const std::string &body, bool chat,
                            const ModelInfo &model, CompletionRequest *out,
                            ApiError *error);

/// The nesting depth of a JSON text (brackets outside strings).
int jsonNestingDepth(const std::string &text);

} // namespace ingot::server
