//===- SentencePieceBpe.h - BPE over the characters of a piece --*- C++ -*-===//
//
// The model half of a sentencepiece_bpe tokenizer: one prepared piece (see
// SentencePiece.h) in, token ids out. Two ways to merge, by what the
// vocabulary carries:
//   merges (tokenizer.json)  as the BPE model of `tokenizers`: each
//       character becomes its token; a character outside the vocabulary
//       becomes the <0xXX> tokens of its bytes when byte fallback is on and
//       all of them exist, else the unknown token (a run of them one token
//       with fuse_unk); then the rule with the best rank merges first.
//   scores (GGUF "llama")  as SentencePiece and llama.cpp: the symbols are
//       the characters, and the adjacent pair whose concatenation is the
//       highest-scoring ordinary token merges first (the leftmost among
//       equals); what is left unmerged and outside the vocabulary then falls
//       back to bytes or the unknown token.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Bpe.h"

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ingot::tok {

class SentencePieceBpe {
public:
  /// Reads vocab, merges or scores, byte fallback and the unknown token.
  Status init(const TokenizerData &data, bool ignoreMerges);
  /// Appends the ids of one prepared piece.
  void encodeWord(std::string_view piece, std::vector<int32_t> *out) const;

private:
  /// Unknown text (one character or an unmerged symbol): bytes or unk.
  struct Pending;
  void appendUnknown(std::string_view text, Pending &unk,
                     std::vector<int32_t> &ids) const;
  void encodeByRank(std::string_view piece, std::vector<int32_t> &ids) const;
  void encodeByScore(std::string_view piece, std::vector<int32_t> &ids) const;

  std::unordered_map<std::string, int32_t> ids_;
  /// Score mode: the tokens a merge may make (not added, unknown or byte
  /// tokens) with their scores.
  std::unordered_map<std::string, std::pair<float, int32_t>> mergeable_;
  MergeTable merges_;
  bool byScore_ = false;
  bool byteFallback_ = false, fuseUnk_ = false, ignoreMerges_ = false;
  int32_t unkId_ = -1;
  int32_t byteIds_[256];
  WordCache cache_;
};

} // namespace ingot::tok
