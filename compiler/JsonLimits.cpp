//===- JsonLimits.cpp - JSON parsing with a nesting limit -----------------===//
#include "compiler/JsonLimits.h"

namespace ingot::compiler {

std::optional<uint64_t> findExcessiveJsonNesting(llvm::StringRef text) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character, '"' included, cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return uint64_t(i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

Status parseJson(const std::string &file, llvm::StringRef text,
                 llvm::json::Value &out, llvm::StringRef what,
                 uint64_t textOffset) {
  if (std::optional<uint64_t> at = findExcessiveJsonNesting(text))
    return Status::error(file + ": JSON nested deeper than " +
                         std::to_string(kMaxJsonDepth) + " levels at byte " +
                         std::to_string(textOffset + *at));
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return Status::error(file + ": " +
                         (what.empty() ? "" : what.str() + " is ") +
                         "not valid JSON: " + llvm::toString(json.takeError()));
  out = std::move(*json);
  return Status::ok();
}

} // namespace ingot::compiler
