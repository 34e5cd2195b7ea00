//===- JsonLimits.h - JSON parsing with a nesting limit ---------*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level with no limit of its
// own, so a file of 100,000 '[' overflows the stack (SIGSEGV) instead of
// failing. Every JSON file the importers read (config.json,
// generation_config.json, tokenizer.json, tokenizer_config.json, the shard
// index and each safetensors header) goes through parseJson, which scans
// the nesting depth first and parses only text within the limit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ingot::compiler {

/// The deepest nesting of arrays and objects accepted. Real files stay far
/// below it (a Hugging Face tokenizer.json nests 4 levels, config.json 2 or
/// 3), and the parser needs about 250 bytes of stack per level, so 512
/// levels cost well under a megabyte of an 8 MB stack.
constexpr int kMaxJsonDepth = 512;

/// The byte offset of the first '[' or '{' (outside strings) that opens
/// level kMaxJsonDepth + 1 of `text`; nullopt when the text nests no deeper
/// than the limit. Malformed text is left for the parser to report.
std::optional<uint64_t> findExcessiveJsonNesting(llvm::StringRef text);

/// Parses `text`, the contents of `file` (named in messages) from byte
/// `textOffset` on, into `out`. Errors: "FILE: JSON nested deeper than 512
/// levels at byte N" (N counted in the file) and "FILE: <what> is not
/// valid JSON: <parser message>", where `what` is "the header" for a
/// safetensors header and empty for a whole file.
Status parseJson(const std::string &file, llvm::StringRef text,
                 llvm::json::Value &out, llvm::StringRef what = "",
                 uint64_t textOffset = 0);

} // namespace ingot::compiler
