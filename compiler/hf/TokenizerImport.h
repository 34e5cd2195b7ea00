//===- TokenizerImport.h - tokenizer.json into TokenizerData ----*- C++ -*-===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <string>

namespace ingot::compiler {

/// Reads DIR/tokenizer.json (BPE: model.vocab, model.merges, added_tokens;
/// byte-level with the pre-tokenizer's split pattern, or SentencePiece-style
/// with "▁" spaces, byte fallback and the unknown token) and, when present,
/// DIR/tokenizer_config.json (add_bos_token, bos/eos tokens, chat_template,
/// recognised as "chatml" or "llama3"). Errors name the file and the key.
Status importTokenizer(const std::string &dir, TokenizerData *out);

} // namespace ingot::compiler
