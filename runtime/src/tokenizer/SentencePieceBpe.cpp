//===- SentencePieceBpe.cpp - BPE over the characters of a piece ----------===//
#include "SentencePieceBpe.h"

#include "SentencePiece.h"
#include "Unicode.h"

#include <cmath>
#include <queue>
#include <unordered_set>

namespace ingot::tok {

/// An unknown token not yet appended. `tokenizers` holds it back until the
/// next character that is in the vocabulary (or the end), so that a run of
/// unknown characters can fuse into one; byte-fallback characters in between
/// do not end the run.
struct SentencePieceBpe::Pending {
  bool active = false;
};

Status SentencePieceBpe::init(const TokenizerData &d, bool ignoreMerges) {
  byteFallback_ = d.byteFallback;
  fuseUnk_ = d.fuseUnk;
  ignoreMerges_ = ignoreMerges;
  unkId_ = d.unkId;
  byScore_ = d.merges.empty() && !d.scores.empty();
  const size_t n = d.vocab.size();
  if (unkId_ < -1 ||
      (unkId_ >= 0 && (size_t(unkId_) >= n || d.vocab[unkId_].empty())))
    return Status::error("the unknown token " + std::to_string(unkId_) +
                         " is not a token of the vocabulary");
  if (!d.scores.empty() && d.scores.size() != n)
    return Status::error(std::to_string(d.scores.size()) + " scores for " +
                         std::to_string(n) + " tokens");
  ids_.clear();
  for (size_t i = 0; i < n; ++i)
    if (!d.vocab[i].empty())
      ids_.emplace(d.vocab[i], int32_t(i));
  for (int b = 0; b < 256; ++b) {
    auto it = ids_.find(byteTokenName(uint8_t(b)));
    byteIds_[b] = it == ids_.end() ? -1 : it->second;
  }
  mergeable_.clear();
  if (byScore_) {
    std::unordered_set<int32_t> added;
    for (const TokenizerData::AddedToken &a : d.addedTokens)
      added.insert(a.id);
    for (size_t i = 0; i < n; ++i) {
      const std::string &s = d.vocab[i];
      if (std::isnan(d.scores[i]))
        return Status::error("the score of token " + std::to_string(i) +
                             " is NaN");
      if (s.empty() || int32_t(i) == unkId_ || added.count(int32_t(i)) ||
          (byteFallback_ && byteTokenValue(s) >= 0))
        continue;
      mergeable_.emplace(s, std::make_pair(d.scores[i], int32_t(i)));
    }
  }
  return merges_.init(d.vocab, d.merges, ids_);
}

void SentencePieceBpe::appendUnknown(std::string_view text, Pending &unk,
                                     std::vector<int32_t> &ids) const {
  if (byteFallback_) {
    bool all = true;
    for (char c : text)
      all = all && byteIds_[uint8_t(c)] >= 0;
    if (all) {
      for (char c : text)
        ids.push_back(byteIds_[uint8_t(c)]);
      return;
    }
  }
  if (unkId_ < 0)
    return; // dropped, as `tokenizers` does without an unknown token
  if (unk.active && !fuseUnk_)
    ids.push_back(unkId_);
  unk.active = true;
}

void SentencePieceBpe::encodeByRank(std::string_view piece,
                                    std::vector<int32_t> &ids) const {
  Pending unk;
  for (size_t pos = 0; pos < piece.size();) {
    size_t start = pos;
    nextChar(piece, &pos);
    std::string_view c = piece.substr(start, pos - start);
    auto it = ids_.find(std::string(c));
    if (it == ids_.end()) {
      appendUnknown(c, unk, ids);
      continue;
    }
    if (unk.active)
      ids.push_back(unkId_), unk.active = false;
    ids.push_back(it->second);
  }
  if (unk.active)
    ids.push_back(unkId_);
  merges_.apply(ids);
}

void SentencePieceBpe::encodeByScore(std::string_view piece,
                                     std::vector<int32_t> &ids) const {
  struct Symbol {
    int32_t prev, next;
    uint32_t start, len; // len 0 once merged into its left neighbour
  };
  std::vector<Symbol> sym;
  for (size_t pos = 0; pos < piece.size();) {
    size_t start = pos;
    nextChar(piece, &pos);
    int32_t i = int32_t(sym.size());
    sym.push_back({i - 1, -1, uint32_t(start), uint32_t(pos - start)});
    if (i > 0)
      sym[i - 1].next = i;
  }
  struct Bigram {
    float score;
    int32_t left, right;
    uint32_t len;
  };
  auto worse = [](const Bigram &x, const Bigram &y) {
    return x.score != y.score ? x.score < y.score : x.left > y.left;
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> heap(worse);
  auto consider = [&](int32_t left) {
    int32_t right = left < 0 ? -1 : sym[left].next;
    if (right < 0)
      return;
    uint32_t len = sym[left].len + sym[right].len;
    auto it = mergeable_.find(std::string(piece.substr(sym[left].start, len)));
    if (it != mergeable_.end())
      heap.push({it->second.first, left, right, len});
  };
  for (int32_t i = 0; i + 1 < int32_t(sym.size()); ++i)
    consider(i);
  while (!heap.empty()) {
    Bigram b = heap.top();
    heap.pop();
    Symbol &left = sym[b.left], &right = sym[b.right];
    // Stale when either side has changed since the pair was pushed.
    if (!left.len || !right.len || left.len + right.len != b.len)
      continue;
    left.len = b.len;
    right.len = 0;
    left.next = right.next;
    if (left.next >= 0)
      sym[left.next].prev = b.left;
    consider(left.prev);
    consider(b.left);
  }
  Pending unk;
  for (int32_t i = sym.empty() ? -1 : 0; i >= 0; i = sym[i].next) {
    std::string_view text = piece.substr(sym[i].start, sym[i].len);
    auto it = mergeable_.find(std::string(text));
    if (it == mergeable_.end()) {
      appendUnknown(text, unk, ids);
      continue;
    }
    if (unk.active)
      ids.push_back(unkId_), unk.active = false;
    ids.push_back(it->second.second);
  }
  if (unk.active)
    ids.push_back(unkId_);
}

void SentencePieceBpe::encodeWord(std::string_view piece,
                                  std::vector<int32_t> *out) const {
  std::string key(piece);
  if (cache_.find(key, out))
    return;
  std::vector<int32_t> ids;
  if (ignoreMerges_ && !byScore_) {
    if (auto it = ids_.find(key); it != ids_.end())
      ids.push_back(it->second);
  }
  if (ids.empty())
    byScore_ ? encodeByScore(piece, ids) : encodeByRank(piece, ids);
  out->insert(out->end(), ids.begin(), ids.end());
  cache_.add(std::move(key), ids);
}

} // namespace ingot::tok
