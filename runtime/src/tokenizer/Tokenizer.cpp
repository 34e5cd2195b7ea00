//===- Tokenizer.cpp - Byte-level BPE encode/decode -----------------------===//
//
// The pipeline of Hugging Face `tokenizers` for byte-level BPE models:
//   1. added tokens are found in the raw text (leftmost start, longest token
//      there) and become their ids;
//   2. each stretch of text between them is normalised (NFC when the model
//      asks for it) and split by the model's pre-tokenizer pattern;
//   3. each piece's bytes go through BPE, with a per-word cache.
// Decoding maps each id back to bytes (BpeModel vocab or added token) as the
// ByteLevel decoder does; turning those bytes into valid UTF-8 (U+FFFD for
// broken sequences, as `tokenizers` does) is left to the caller.
//
//===----------------------------------------------------------------------===//
#include "ingot/Tokenizer.h"

#include "tokenizer/Bpe.h"
#include "tokenizer/ByteLevel.h"
#include "tokenizer/ChatTemplate.h"
#include "tokenizer/PreTokenizer.h"
#include "tokenizer/Unicode.h"

#include <unordered_map>

namespace ingot {
namespace {

/// Finds added tokens in text: a byte trie walked from each position.
class AddedTokenMatcher {
public:
  void add(std::string_view content, int32_t id) {
    int32_t node = 0;
    for (char c : content) {
      auto [it, inserted] =
          children_.try_emplace(edge(node, c), int32_t(ids_.size()));
      if (inserted)
        ids_.push_back(-1);
      node = it->second;
    }
    ids_[node] = id;
  }
  bool empty() const { return ids_.size() == 1; }

  /// The leftmost match at or after `from`, longest among those starting
  /// there: sets *start, *length and *id.
  bool find(std::string_view text, size_t from, size_t *start, size_t *length,
            int32_t *id) const {
    for (size_t i = from; i < text.size(); ++i) {
      int32_t node = 0;
      size_t best = 0;
      for (size_t k = i; k < text.size(); ++k) {
        auto it = children_.find(edge(node, text[k]));
        if (it == children_.end())
          break;
        node = it->second;
        if (ids_[node] >= 0)
          best = k + 1 - i, *id = ids_[node];
      }
      if (best) {
        *start = i, *length = best;
        return true;
      }
    }
    return false;
  }

private:
  static uint64_t edge(int32_t node, char c) {
    return uint64_t(uint32_t(node)) << 8 | uint8_t(c);
  }
  std::unordered_map<uint64_t, int32_t> children_;
  std::vector<int32_t> ids_{-1}; // per node: the token ending there, or -1
};

} // namespace

struct Tokenizer::Impl {
  TokenizerData data;
  tok::TokenizerOptions options;
  tok::BpeModel bpe;
  AddedTokenMatcher added;
  std::vector<std::string> bytes; // per id: what it decodes to

  void encodeStretch(std::string_view text, std::vector<int32_t> *ids) const {
    if (text.empty())
      return;
    std::string normalized;
    if (options.nfc) {
      normalized = tok::toNfc(text);
      text = normalized;
    }
    std::vector<std::string_view> pieces;
    tok::preTokenize(text, options.pattern, &pieces);
    for (std::string_view piece : pieces)
      bpe.encodeWord(piece, ids);
  }
};

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::~Tokenizer() = default;

Status Tokenizer::create(const TokenizerData &data,
                         std::unique_ptr<Tokenizer> *out) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  Impl &im = *t->impl_;
  std::string error;
  if (!tok::parseTokenizerOptions(data.pretokenizer, &im.options, &error))
    return Status::error("tokenizer: " + error);
  if (!tok::isKnownChatTemplate(data.chatTemplate))
    return Status::error("tokenizer: unknown chat template '" +
                         data.chatTemplate.substr(0, 40) + "'");
  const size_t n = data.vocab.size();
  if (n == 0 || n > size_t(INT32_MAX))
    return Status::error("tokenizer: the vocabulary is empty or too large");
  for (int32_t id : {data.bosId, data.eosId})
    if (id < -1 || (id >= 0 && size_t(id) >= n))
      return Status::error("tokenizer: BOS/EOS id " + std::to_string(id) +
                           " is outside the vocabulary of " +
                           std::to_string(n));
  if (Status s = im.bpe.init(data.vocab, data.merges, im.options.ignoreMerges);
      !s)
    return Status::error("tokenizer: " + s.message());
  im.bytes.resize(n);
  for (size_t i = 0; i < n; ++i)
    im.bytes[i] = tok::byteLevelToBytes(data.vocab[i]);
  for (const TokenizerData::AddedToken &a : data.addedTokens) {
    if (a.id < 0 || size_t(a.id) >= n || a.content.empty())
      return Status::error("tokenizer: added token " + std::to_string(a.id) +
                           " is empty or outside the vocabulary of " +
                           std::to_string(n));
    im.added.add(a.content, a.id);
    im.bytes[a.id] = tok::byteLevelToBytes(a.content);
  }
  // Everything but the vocabulary and merges, which now live in `bpe`.
  im.data.addedTokens = data.addedTokens;
  im.data.pretokenizer = data.pretokenizer;
  im.data.bosId = data.bosId, im.data.eosId = data.eosId;
  im.data.addBos = data.addBos;
  im.data.chatTemplate = data.chatTemplate;
  *out = std::move(t);
  return Status::ok();
}

std::vector<int32_t> Tokenizer::encode(std::string_view text,
                                       bool addBos) const {
  const Impl &im = *impl_;
  std::vector<int32_t> ids;
  if (addBos && im.data.bosId >= 0)
    ids.push_back(im.data.bosId);
  size_t pos = 0, start, length;
  int32_t id;
  while (!im.added.empty() && im.added.find(text, pos, &start, &length, &id)) {
    im.encodeStretch(text.substr(pos, start - pos), &ids);
    ids.push_back(id);
    pos = start + length;
  }
  im.encodeStretch(text.substr(pos), &ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids) const {
  std::string out;
  for (int32_t id : ids)
    if (id >= 0 && size_t(id) < impl_->bytes.size())
      out += impl_->bytes[id];
  return out;
}

std::string Tokenizer::tokenBytes(int32_t id) const {
  if (id < 0 || size_t(id) >= impl_->bytes.size())
    return {};
  return impl_->bytes[id];
}

int32_t Tokenizer::vocabSize() const { return int32_t(impl_->bytes.size()); }
int32_t Tokenizer::bosId() const { return impl_->data.bosId; }
int32_t Tokenizer::eosId() const { return impl_->data.eosId; }
bool Tokenizer::addBos() const { return impl_->data.addBos; }

Status Tokenizer::applyChatTemplate(const std::vector<ChatMessage> &messages,
                                    bool addGenerationPrompt,
                                    std::string *out) const {
  const TokenizerData &d = impl_->data;
  std::string bos = "<|begin_of_text|>";
  for (const TokenizerData::AddedToken &a : d.addedTokens)
    if (a.id == d.bosId)
      bos = a.content;
  return tok::renderChat(d.chatTemplate, bos, messages, addGenerationPrompt,
                         out);
}

} // namespace ingot
