//===- TextStream.h - Incremental text with stop strings --------*- C++ -*-===//
//
// Turns a request's token bytes into the text its events carry: only whole
// UTF-8 characters are released, and text that could be the start of a
// stop string is held back until it is known not to be one. When a stop
// string appears, the text up to (excluding) it is the last released, as in
// vLLM.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace ingot::engine {

class TextStream {
public:
  explicit TextStream(std::vector<std::string> stopStrings);
  /// Adds one token's bytes; returns the text now safe to release and sets
  /// `stopped` when a stop string completed.
  std::string push(const std::string &bytes, bool *stopped);
  /// Everything still held (incomplete UTF-8 becomes U+FFFD).
  std::string flush();

private:
  std::vector<std::string> stops_;
  std::string pending_; // bytes of an incomplete UTF-8 character
  std::string text_;    // complete text not yet released
};

} // namespace ingot::engine
