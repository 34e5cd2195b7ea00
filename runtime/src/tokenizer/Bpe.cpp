//===- Bpe.cpp - Byte-pair merging of one pre-tokenized word --------------===//
//
// The word starts as one symbol per byte; the adjacent pair with the best
// (lowest) merge rank is merged, the leftmost one among equals, until no
// adjacent pair has a merge. A min-heap of candidate pairs over a linked list
// of symbols makes that O(n log n); heap entries made stale by an earlier
// merge are recognised when popped (the pair there no longer has that rank).
//
//===----------------------------------------------------------------------===//
#include "Bpe.h"

#include "ingot/ByteLevel.h"

#include <queue>

namespace ingot::tok {

Status MergeTable::init(const std::vector<std::string> &vocab,
                        const std::vector<std::pair<int32_t, int32_t>> &merges,
                        const std::unordered_map<std::string, int32_t> &ids) {
  merges_.clear();
  merges_.reserve(merges.size());
  const int32_t n = int32_t(vocab.size());
  // One buffer for every merged string, and messages built only on error:
  // this loop runs once per merge (48,900 for SmolLM2) at load.
  std::string joined;
  for (size_t r = 0; r < merges.size(); ++r) {
    auto [a, b] = merges[r];
    auto what = [r] { return "tokenizer merge " + std::to_string(r); };
    if (a < 0 || a >= n || b < 0 || b >= n || vocab[a].empty() ||
        vocab[b].empty())
      return Status::error(what() + " refers to token " + std::to_string(a) +
                           " or " + std::to_string(b) +
                           ", which is not in the vocabulary");
    joined.assign(vocab[a]);
    joined += vocab[b];
    auto it = ids.find(joined);
    if (it == ids.end())
      return Status::error(what() + ": the merged token is not in the "
                                    "vocabulary");
    // A repeated pair keeps its last rank, as in `tokenizers`.
    merges_[key(a, b)] = Merge{int32_t(r), it->second};
  }
  return Status::ok();
}

void MergeTable::apply(std::vector<int32_t> &ids) const {
  const int32_t n = int32_t(ids.size());
  if (n < 2 || merges_.empty())
    return;
  struct Symbol {
    int32_t id; // -1 once merged into its left neighbour
    int32_t prev, next;
  };
  std::vector<Symbol> sym(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i)
    sym[i] = {ids[i], i - 1, i + 1 < n ? i + 1 : -1};

  struct Candidate {
    int32_t rank, pos, id;
  };
  auto after = [](const Candidate &x, const Candidate &y) {
    return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(after)> heap(
      after);
  auto consider = [&](int32_t pos) {
    int32_t next = sym[pos].next;
    if (next < 0)
      return;
    auto it = merges_.find(key(sym[pos].id, sym[next].id));
    if (it != merges_.end())
      heap.push({it->second.rank, pos, it->second.id});
  };
  for (int32_t i = 0; i + 1 < n; ++i)
    consider(i);

  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    Symbol &left = sym[c.pos];
    if (left.id < 0 || left.next < 0)
      continue;
    Symbol &right = sym[left.next];
    auto it = merges_.find(key(left.id, right.id));
    if (it == merges_.end() || it->second.rank != c.rank)
      continue; // stale: this pair changed since the entry was pushed
    left.id = c.id;
    right.id = -1;
    left.next = right.next;
    if (left.next >= 0)
      sym[left.next].prev = c.pos;
    if (left.prev >= 0)
      consider(left.prev);
    consider(c.pos);
  }
  ids.clear();
  for (int32_t i = 0; i >= 0; i = sym[i].next)
    ids.push_back(sym[i].id); // symbol 0 is never merged away
}

bool WordCache::find(const std::string &word, std::vector<int32_t> *out) const {
  if (word.size() > kWordLimit)
    return false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(word);
  if (it == cache_.end())
    return false;
  out->insert(out->end(), it->second.begin(), it->second.end());
  return true;
}

void WordCache::add(std::string word, const std::vector<int32_t> &ids) const {
  if (word.size() > kWordLimit)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (cache_.size() >= kEntryLimit)
    cache_.clear();
  cache_.emplace(std::move(word), ids);
}

Status BpeModel::init(const std::vector<std::string> &vocab,
                      const std::vector<std::pair<int32_t, int32_t>> &merges,
                      bool ignoreMerges) {
  ignoreMerges_ = ignoreMerges;
  ids_.clear();
  ids_.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i)
    if (!vocab[i].empty())
      ids_.emplace(vocab[i], int32_t(i));
  for (int b = 0; b < 256; ++b) {
    std::string s;
    appendByteLevel(std::string_view(reinterpret_cast<const char *>(&b), 1), s);
    auto it = ids_.find(s);
    byteIds_[b] = it == ids_.end() ? -1 : it->second;
  }
  return merges_.init(vocab, merges, ids_);
}

void BpeModel::encodeWord(std::string_view bytes,
                          std::vector<int32_t> *out) const {
  std::string key(bytes);
  if (cache_.find(key, out))
    return;
  std::vector<int32_t> ids;
  if (ignoreMerges_) {
    std::string word;
    appendByteLevel(bytes, word);
    auto it = ids_.find(word);
    if (it != ids_.end())
      ids.push_back(it->second);
  }
  if (ids.empty()) {
    for (char c : bytes)
      if (int32_t id = byteIds_[uint8_t(c)]; id >= 0)
        ids.push_back(id);
    merges_.apply(ids);
  }
  out->insert(out->end(), ids.begin(), ids.end());
  cache_.add(std::move(key), ids);
}

} // namespace ingot::tok
