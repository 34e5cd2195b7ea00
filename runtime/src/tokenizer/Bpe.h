//===- Bpe.h - Byte-pair merging of one pre-tokenized word ------*- C++ -*-===//
#pragma once

#include "ingot/Status.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ingot::tok {

/// Merge rules over token ids, by priority: the adjacent pair with the best
/// (lowest) rank merges first, the leftmost one among equals, until no
/// adjacent pair has a rule. Shared by both BPE tokenizer kinds.
class MergeTable {
public:
  /// `ids` maps each non-empty vocab string to its id. Fails if a merge
  /// refers to a missing token or its concatenation is not in the vocab.
  Status init(const std::vector<std::string> &vocab,
              const std::vector<std::pair<int32_t, int32_t>> &merges,
              const std::unordered_map<std::string, int32_t> &ids);
  void apply(std::vector<int32_t> &symbols) const;

private:
  struct Merge {
    int32_t rank;
    int32_t id;
  };
  static uint64_t key(int32_t a, int32_t b) {
    return uint64_t(uint32_t(a)) << 32 | uint32_t(b);
  }
  std::unordered_map<uint64_t, Merge> merges_;
};

/// A bounded, thread-safe cache of the ids of words: words recur constantly
/// in real text. Long words (a whole SentencePiece stretch) are not kept.
class WordCache {
public:
  bool find(const std::string &word, std::vector<int32_t> *out) const;
  void add(std::string word, const std::vector<int32_t> &ids) const;

private:
  static constexpr size_t kEntryLimit = 1 << 16;
  static constexpr size_t kWordLimit = 256; // bytes
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

/// Byte-level BPE: a word's bytes, each as its byte-alphabet token, merged.
class BpeModel {
public:
  /// `vocab` holds token strings (byte-level alphabet) by id, "" for ids the
  /// model does not produce; merges are (left, right) id pairs by priority.
  /// Fails if a merge's concatenation is not in the vocab.
  Status init(const std::vector<std::string> &vocab,
              const std::vector<std::pair<int32_t, int32_t>> &merges,
              bool ignoreMerges);

  /// Appends the ids of one word given as raw bytes. Bytes whose character is
  /// not in the vocab are dropped, as `tokenizers` does without an unknown
  /// token.
  void encodeWord(std::string_view bytes, std::vector<int32_t> *out) const;

private:
  std::unordered_map<std::string, int32_t> ids_;
  MergeTable merges_;
  int32_t byteIds_[256];
  bool ignoreMerges_ = false;
  WordCache cache_;
};

} // namespace ingot::tok
