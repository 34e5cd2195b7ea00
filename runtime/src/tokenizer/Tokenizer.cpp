//===- Tokenizer.cpp - BPE encode/decode ----------------------------------===//
//
// The pipeline of Hugging Face `tokenizers` for the two BPE kinds:
//   1. added tokens are found in the raw text (leftmost start, longest token
//      there) and become their ids;
//   2. each stretch of text between them is prepared: byte-level models
//      normalise it (NFC when the model asks for it) and split it by their
//      pre-tokenizer pattern; SentencePiece models turn spaces into "▁",
//      add the prefix and maybe split at each "▁" (SentencePiece.h);
//   3. each piece goes through BPE, with a per-word cache.
// Byte-level decoding maps each id back to bytes (BpeModel vocab or added
// token) as the ByteLevel decoder does; turning those bytes into valid UTF-8
// (U+FFFD for broken sequences, as `tokenizers` does) is left to the caller.
// SentencePiece decoding is its decoder chain's (SentencePieceDecoder).
//
//===----------------------------------------------------------------------===//
#include "ingot/Tokenizer.h"

#include "ingot/ByteLevel.h"
#include "tokenizer/Bpe.h"
#include "tokenizer/ChatTemplate.h"
#include "tokenizer/PreTokenizer.h"
#include "tokenizer/SentencePiece.h"
#include "tokenizer/SentencePieceBpe.h"
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
  TokenizerData data; // all but the vocabulary, merges and scores
  bool sentencePiece = false;
  tok::TokenizerOptions options; // byte-level
  tok::BpeModel bpe;
  std::vector<std::string> bytes; // byte-level: per id what it decodes to
  tok::SentencePieceOptions spmOptions;
  tok::SentencePieceBpe spm;
  tok::SentencePieceDecoder spmDecoder;
  AddedTokenMatcher added;

  Status initByteLevel(const TokenizerData &d);
  Status initSentencePiece(const TokenizerData &d);

  void encodeStretch(std::string_view text, bool atTextStart,
                     std::vector<int32_t> *ids) const {
    if (text.empty())
      return;
    std::string prepared;
    std::vector<std::string_view> pieces;
    if (sentencePiece) {
      tok::prepareStretch(text, atTextStart, spmOptions, &prepared, &pieces);
      for (std::string_view piece : pieces)
        spm.encodeWord(piece, ids);
      return;
    }
    if (options.nfc) {
      prepared = tok::toNfc(text);
      text = prepared;
    }
    tok::preTokenize(text, options.pattern, &pieces);
    for (std::string_view piece : pieces)
      bpe.encodeWord(piece, ids);
  }
};

Status Tokenizer::Impl::initByteLevel(const TokenizerData &d) {
  std::string error;
  if (!tok::parseTokenizerOptions(d.pretokenizer, &options, &error))
    return Status::error(error);
  if (!d.scores.empty() || d.byteFallback || d.unkId != -1 || d.fuseUnk ||
      !d.decoder.empty())
    return Status::error("scores, byte fallback, an unknown token and a "
                         "decoder belong to sentencepiece_bpe models");
  if (Status s = bpe.init(d.vocab, d.merges, options.ignoreMerges); !s)
    return s;
  bytes.resize(d.vocab.size());
  for (size_t i = 0; i < d.vocab.size(); ++i)
    bytes[i] = tok::byteLevelToBytes(d.vocab[i]);
  for (const TokenizerData::AddedToken &a : d.addedTokens)
    bytes[a.id] = tok::byteLevelToBytes(a.content);
  return Status::ok();
}

Status Tokenizer::Impl::initSentencePiece(const TokenizerData &d) {
  std::string error;
  if (!tok::parseSentencePieceOptions(d.pretokenizer, d.decoder, &spmOptions,
                                      &error))
    return Status::error(error);
  if (Status s = spm.init(d, spmOptions.ignoreMerges); !s)
    return s;
  // An added token decodes through the decoder chain like any token.
  std::vector<std::string> raw = d.vocab;
  for (const TokenizerData::AddedToken &a : d.addedTokens)
    raw[a.id] = a.content;
  spmDecoder.init(std::move(raw), spmOptions);
  return Status::ok();
}

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::~Tokenizer() = default;

Status Tokenizer::create(const TokenizerData &data,
                         std::unique_ptr<Tokenizer> *out) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  Impl &im = *t->impl_;
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
  for (const TokenizerData::AddedToken &a : data.addedTokens) {
    if (a.id < 0 || size_t(a.id) >= n || a.content.empty())
      return Status::error("tokenizer: added token " + std::to_string(a.id) +
                           " is empty or outside the vocabulary of " +
                           std::to_string(n));
    im.added.add(a.content, a.id);
  }
  im.sentencePiece = data.model == "sentencepiece_bpe";
  if (!im.sentencePiece && data.model != "byte_level_bpe")
    return Status::error("tokenizer: unknown model '" +
                         data.model.substr(0, 40) +
                         "' (supported: byte_level_bpe, sentencepiece_bpe)");
  Status s =
      im.sentencePiece ? im.initSentencePiece(data) : im.initByteLevel(data);
  if (!s)
    return Status::error("tokenizer: " + s.message());
  // Everything but the vocabulary, merges and scores, which now live in the
  // model and decoder.
  TokenizerData &meta = im.data;
  meta.model = data.model;
  meta.addedTokens = data.addedTokens;
  meta.pretokenizer = data.pretokenizer, meta.decoder = data.decoder;
  meta.byteFallback = data.byteFallback;
  meta.unkId = data.unkId, meta.fuseUnk = data.fuseUnk;
  meta.bosId = data.bosId, meta.eosId = data.eosId;
  meta.addBos = data.addBos;
  meta.chatTemplate = data.chatTemplate;
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
    im.encodeStretch(text.substr(pos, start - pos), pos == 0, &ids);
    ids.push_back(id);
    pos = start + length;
  }
  im.encodeStretch(text.substr(pos), pos == 0, &ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids) const {
  const Impl &im = *impl_;
  if (im.sentencePiece)
    return im.spmDecoder.decode(ids);
  std::string out;
  for (int32_t id : ids)
    if (id >= 0 && size_t(id) < im.bytes.size())
      out += im.bytes[id];
  return out;
}

std::string Tokenizer::tokenBytes(int32_t id) const {
  const Impl &im = *impl_;
  if (im.sentencePiece)
    return im.spmDecoder.tokenBytes(id);
  if (id < 0 || size_t(id) >= im.bytes.size())
    return {};
  return im.bytes[id];
}

int32_t Tokenizer::vocabSize() const {
  const Impl &im = *impl_;
  return im.sentencePiece ? im.spmDecoder.size() : int32_t(im.bytes.size());
}
int32_t Tokenizer::bosId() const { return impl_->data.bosId; }
int32_t Tokenizer::eosId() const { return impl_->data.eosId; }
bool Tokenizer::addBos() const { return impl_->data.addBos; }

Status Tokenizer::applyChatTemplate(const std::vector<ChatMessage> &messages,
                                    bool addGenerationPrompt,
                                    std::string *out) const {
  const TokenizerData &d = impl_->data;
  std::string bos = "<|begin_of_text|>", eos;
  for (const TokenizerData::AddedToken &a : d.addedTokens) {
    if (a.id == d.bosId)
      bos = a.content;
    if (a.id == d.eosId)
      eos = a.content;
  }
  return tok::renderChat(d.chatTemplate, bos, eos, messages,
                         addGenerationPrompt, out);
}

} // namespace ingot
