//===- TextStream.cpp - Incremental text with stop strings ----------------===//
#include "engine/TextStream.h"

#include "ingot/Generator.h"

#include <algorithm>

namespace ingot::engine {

TextStream::TextStream(std::vector<std::string> stopStrings)
    : stops_(std::move(stopStrings)) {}

std::string TextStream::push(const std::string &bytes, bool *stopped) {
  *stopped = false;
  pending_ += bytes;
  text_ += takeCompleteUtf8(pending_, false);
  if (stops_.empty()) {
    std::string out;
    out.swap(text_);
    return out;
  }
  // text_ never holds a whole stop string (it would have stopped), so the
  // earliest match, if any, involves the new bytes.
  size_t first = std::string::npos;
  for (const std::string &s : stops_)
    if (!s.empty())
      first = std::min(first, text_.find(s));
  if (first != std::string::npos) {
    *stopped = true;
    std::string out = text_.substr(0, first);
    text_.clear();
    pending_.clear();
    return out;
  }
  // Hold back the longest tail that is a proper prefix of a stop string.
  size_t hold = 0;
  for (const std::string &s : stops_)
    for (size_t k = s.empty() ? 0 : std::min(s.size() - 1, text_.size());
         k > hold; --k)
      if (text_.compare(text_.size() - k, k, s, 0, k) == 0) {
        hold = k;
        break;
      }
  std::string out = text_.substr(0, text_.size() - hold);
  text_.erase(0, text_.size() - hold);
  return out;
}

std::string TextStream::flush() {
  std::string out = text_ + takeCompleteUtf8(pending_, true);
  text_.clear();
  return out;
}

} // namespace ingot::engine
