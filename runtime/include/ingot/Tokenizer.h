//===- Tokenizer.h - BPE encode/decode --------------------------*- C++ -*-===//
//
// Matches the Hugging Face `tokenizers` package exactly for byte-level BPE
// models (GPT-2, Llama-3, Qwen2, SmolLM2) and SentencePiece-style BPE models
// (Llama-2, Mistral, TinyLlama, Gemma): added/special tokens are split out
// first; byte-level models pre-tokenize the rest with the model's split
// pattern, map it to the byte-level alphabet and merge by rank;
// SentencePiece models turn spaces into "▁", merge characters by rank or
// score and fall back to <0xXX> byte tokens. GGUF "llama" vocabularies
// (scores, no merges) encode as llama.cpp does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ingot {

struct ChatMessage {
  std::string role; // "system", "user", "assistant"
  std::string content;
};

class Tokenizer {
public:
  /// Validates the data (ids in range, merges resolvable); errors say what.
  static Status create(const TokenizerData &data,
                       std::unique_ptr<Tokenizer> *out);
  ~Tokenizer();

  std::vector<int32_t> encode(std::string_view text, bool addBos) const;
  /// Byte-level: the concatenated bytes of the ids (ids without a string
  /// give ""), possibly broken UTF-8. SentencePiece: the text the model's
  /// decoder chain gives ("▁" as ' ', byte runs assembled, the prefix's
  /// space stripped).
  std::string decode(const std::vector<int32_t> &ids) const;
  /// The raw bytes of one token, for streaming; may be an incomplete UTF-8
  /// sequence (a byte token is its byte). Nothing is stripped.
  std::string tokenBytes(int32_t id) const;
  int32_t vocabSize() const;
  int32_t bosId() const;
  int32_t eosId() const;
  bool addBos() const;
  /// Formats messages with the model's template ("chatml" or "llama3");
  /// error if the model has none that ingot recognises.
  Status applyChatTemplate(const std::vector<ChatMessage> &messages,
                           bool addGenerationPrompt, std::string *out) const;

private:
  Tokenizer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ingot
