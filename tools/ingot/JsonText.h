//===- JsonText.h - The CLI's JSON, on nlohmann-json ------------*- C++ -*-===//
//
// Reading: lines of batch and dataset files come from anyone, so a parse
// never throws past this header, nesting is capped (a hostile line stays
// small) and what nlohmann-json accepts but we do not is refused: duplicate
// keys (which value would win is a guess) and numbers too large for a
// double. Writing: ordered objects, so keys come out in the order written;
// invalid UTF-8 in a string (names read from a file may be anything)
// becomes U+FFFD instead of an exception; NaN and infinity, which JSON
// cannot express, are written as null on purpose (finiteOrNull).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::cli {

using OrderedJson = nlohmann::ordered_json;

/// JSON has no NaN or infinity: a figure that is not finite (a ceiling that
/// was not probed, a rate over no time) is null.
inline OrderedJson finiteOrNull(double v) {
  return std::isfinite(v) ? OrderedJson(v) : OrderedJson(nullptr);
}

/// The text of `value`, compact (indent < 0) or indented.
inline std::string jsonText(const OrderedJson &value, int indent = -1) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false,
                    OrderedJson::error_handler_t::replace);
}

/// The value as an int64 when it was written as an integer and fits one
/// (seeds, token ids); 1e3 and 2^63 are not.
inline std::optional<int64_t> exactInt64(const OrderedJson &v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(INT64_MAX))
      return std::nullopt;
    return int64_t(u);
  }
  if (v.is_number_integer())
    return v.get<int64_t>();
  return std::nullopt;
}

/// "null", "a boolean", ... for messages that say what a key held.
inline const char *jsonKindName(const OrderedJson &v) {
  if (v.is_null())
    return "null";
  if (v.is_boolean())
    return "a boolean";
  if (v.is_number())
    return "a number";
  if (v.is_string())
    return "a string";
  if (v.is_array())
    return "an array";
  return "an object";
}

namespace detail {

/// nlohmann's "[json.exception.parse_error.101] parse error at line 1,
/// column 7: syntax error while parsing value - invalid literal; last read:
/// 'tru'" -> "column 7: syntax error while parsing value - invalid literal".
/// The echo of the input is dropped: it may hold the very bytes refused.
inline std::string parseErrorText(const nlohmann::json::exception &e) {
  std::string what = e.what();
  size_t at = what.find("column ");
  if (at == std::string::npos) // e.g. out_of_range.406, a number overflow
    at = what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2;
  std::string text = what.substr(at);
  if (size_t echo = text.find("; last read"); echo != std::string::npos)
    text.resize(echo);
  if (text.find("ill-formed UTF-8") != std::string::npos) {
    size_t colon = text.find(": ");
    text = text.substr(0, colon == std::string::npos ? 0 : colon + 2) +
           "invalid UTF-8 in a string";
  }
  return text;
}

} // namespace detail

/// Parses `text` as one JSON value into *out; returns "" or what is wrong
/// ("column N: ..." where nlohmann knows the place).
inline std::string parseJsonLine(std::string_view text, OrderedJson *out,
                                 int maxDepth = 32) {
  std::string problem; // the first one the callback saw
  // Keys seen in each open container (unused for arrays); the callback is
  // only told of containers it kept, which are the ones above maxDepth.
  std::vector<std::set<std::string>> open;
  auto check = [&](int depth, OrderedJson::parse_event_t event,
                   OrderedJson &parsed) {
    using Event = OrderedJson::parse_event_t;
    switch (event) {
    case Event::object_start:
    case Event::array_start:
      if (depth >= maxDepth) {
        if (problem.empty())
          problem = "nesting deeper than " + std::to_string(maxDepth);
        return false; // dropped: nothing below it is built
      }
      open.emplace_back();
      return true;
    case Event::object_end:
    case Event::array_end:
      open.pop_back();
      return true;
    case Event::key:
      if (size_t(depth) == open.size() &&
          !open.back().insert(parsed.get<std::string>()).second &&
          problem.empty())
        problem = "duplicate key '" + parsed.get<std::string>() + "'";
      return true;
    case Event::value:
      return true;
    }
    return true;
  };
  try {
    *out = OrderedJson::parse(text.begin(), text.end(), check);
  } catch (const nlohmann::json::exception &e) {
    *out = nullptr;
    return problem.empty() ? detail::parseErrorText(e) : problem;
  }
  if (!problem.empty())
    *out = nullptr;
  return problem;
}

} // namespace ingot::cli
