//===- PreTokenizer.h - Splitting text into BPE words -----------*- C++ -*-===//
//
// Hand-written equivalents of the split patterns that byte-level BPE models
// use, with the leftmost-first, backtracking semantics of the Oniguruma
// regexes that Hugging Face `tokenizers` runs (lookahead included):
//
//   gpt2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+
//           |\s+(?!\S)|\s+
//   llama3  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+
//           |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2   llama3 with \p{N} instead of \p{N}{1,3}
//   gpt2-digits  every \p{N} character on its own (the Digits pre-tokenizer
//           with individual_digits), then gpt2 on the pieces in between
//
// Each pattern matches every character, so the pieces cover the text.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/TokenizerFormat.h"

#include <string>
#include <string_view>
#include <vector>

namespace ingot::tok {

/// Appends the pieces of `text` to `pieces` (views into `text`, in order,
/// concatenating to `text`).
void preTokenize(std::string_view text, SplitPattern pattern,
                 std::vector<std::string_view> *pieces);

} // namespace ingot::tok
