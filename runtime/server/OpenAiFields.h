//===- OpenAiFields.h - Typed, range-checked JSON field readers -*- C++ -*-===//
//
// The readers behind OpenAiRequest.cpp and OpenAiPrompt.cpp. Each returns
// the fallback when the field is absent or JSON null (OpenAI clients send
// nulls for unset optional fields) and throws RequestRefused, naming the
// field, when it has the wrong type or is out of range; the one catch is in
// parseCompletionRequest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OpenAiRequest.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace ingot::server::fields {

struct RequestRefused {
  ApiError error;
};

[[noreturn]] void refuse(const std::string &param, const std::string &message,
                         const std::string &code = "");

const nlohmann::json *find(const nlohmann::json &body, const char *name);

/// In [lo, hi], or (lo, hi] when loOpen.
double number(const nlohmann::json &body, const char *name, double fallback,
              double lo, double hi, bool loOpen = false);
/// A whole number in [lo, hi]; 16.0 counts as 16, as pydantic accepts it.
int64_t integer(const nlohmann::json &body, const char *name, int64_t fallback,
                int64_t lo, int64_t hi);
bool boolean(const nlohmann::json &body, const char *name, bool fallback);

} // namespace ingot::server::fields
