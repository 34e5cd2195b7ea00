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
  struct Merge {
    int32_t rank;
    int32_t id;
  };
  static uint64_t key(int32_t a, int32_t b) {
    return uint64_t(uint32_t(a)) << 32 | uint32_t(b);
  }
  void merge(std::vector<int32_t> &symbols) const;

  std::unordered_map<std::string, int32_t> ids_;
  std::unordered_map<uint64_t, Merge> merges_;
  int32_t byteIds_[256];
  bool ignoreMerges_ = false;

  // Words recur constantly in real text; cache their ids (bounded).
  static constexpr size_t kCacheLimit = 1 << 16;
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

} // namespace ingot::tok
