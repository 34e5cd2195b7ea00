//===- GgufImportTokenizer.cpp - tokenizer.ggml.* into TokenizerData ------===//
//
// A "gpt2" GGUF vocabulary is byte-level BPE as tokenizer.json has it: the
// tokens are stored in the byte-to-unicode alphabet, merges as "left right"
// strings in priority order, and `tokenizer.ggml.pre` names the split
// pattern. Control and user-defined tokens are tokenizer.json's added
// tokens (special or not), so chat markers encode to their single ids.
//
// A "llama" GGUF vocabulary is SentencePiece BPE as llama.cpp runs it: the
// tokens are text with "▁" for spaces, `tokenizer.ggml.scores` decide the
// merges (the adjacent pair making the highest-scoring token first; no
// merges are stored), `add_space_prefix` (default true) puts a "▁" before
// the text after each special token, and characters outside the vocabulary
// become the byte tokens <0xXX> (token type 6). Unknown tokens (type 2) are
// special added tokens like control ones. Unused tokens (type 5) get no
// string: they are never produced and decode to nothing, as in llama.cpp.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufImportInternal.h"
#include "compiler/hf/TokenizerConfigImport.h"
#include "ingot/TokenizerFormat.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <unordered_map>

namespace ingot::compiler::gguf {
namespace {

// llama.cpp's token types (tokenizer.ggml.token_type).
constexpr int64_t kTokenUnknown = 2, kTokenControl = 3, kTokenUserDefined = 4,
                  kTokenUnused = 5, kTokenByte = 6;
// Ids are dense vector indices; real vocabularies stay far below this.
constexpr size_t kMaxVocab = size_t(1) << 22;

/// The runtime pre-tokenizer for a `tokenizer.ggml.pre` name: the same
/// string importTokenizer derives from the equivalent tokenizer.json.
std::optional<std::string> pretokenizerFor(const std::string &pre) {
  static const std::pair<const char *, const char *> kPre[] = {
      {"gpt2", "gpt2"},
      {"smollm", "gpt2-digits"}, // digits split one by one, then GPT-2
      {"llama-bpe", "llama3+ignore_merges"},
      {"qwen2", "qwen2+nfc"},
  };
  for (auto [name, ours] : kPre)
    if (pre == name)
      return std::string(ours);
  return std::nullopt;
}

/// Reads the tokens, and their types into *types (empty when the file has
/// none); control and user-defined tokens become added tokens.
Status readVocab(const GgufFile &f, TokenizerData *t,
                 std::unordered_map<std::string, int32_t> &ids,
                 std::vector<int64_t> *types) {
  const std::vector<GgufValue> *tokens = nullptr;
  if (Status s = f.getArray("tokenizer.ggml.tokens", GgufValueType::String,
                            tokens);
      !s)
    return s;
  if (tokens->empty() || tokens->size() > kMaxVocab)
    return f.error("tokenizer.ggml.tokens",
                   "has " + std::to_string(tokens->size()) +
                       " tokens; expected 1 to 2^22");
  t->vocab.reserve(tokens->size());
  for (const GgufValue &v : *tokens) {
    ids.emplace(v.s, int32_t(t->vocab.size()));
    t->vocab.push_back(v.s);
  }
  types->clear();
  if (!f.find("tokenizer.ggml.token_type"))
    return Status::ok();
  const std::vector<GgufValue> *list = nullptr;
  if (Status s = f.getArray("tokenizer.ggml.token_type", GgufValueType::I32,
                            list);
      !s)
    return s;
  if (list->size() != tokens->size())
    return f.error("tokenizer.ggml.token_type",
                   "has " + std::to_string(list->size()) + " entries for " +
                       std::to_string(tokens->size()) + " tokens");
  for (size_t id = 0; id < list->size(); ++id) {
    int64_t type = (*list)[id].i;
    types->push_back(type);
    if (type == kTokenControl || type == kTokenUserDefined)
      t->addedTokens.push_back(
          {int32_t(id), t->vocab[id], type == kTokenControl});
  }
  return Status::ok();
}

Status readMerges(const GgufFile &f, TokenizerData *t,
                  const std::unordered_map<std::string, int32_t> &ids) {
  const std::vector<GgufValue> *merges = nullptr;
  if (Status s = f.getArray("tokenizer.ggml.merges", GgufValueType::String,
                            merges);
      !s)
    return s;
  t->merges.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const std::string &m = (*merges)[i].s;
    // Tokens never hold a space (it is 'Ġ' in the byte alphabet), so the
    // first space separates the pair.
    auto [left, right] = llvm::StringRef(m).split(' ');
    auto l = ids.find(left.str()), r = ids.find(right.str());
    auto merged = ids.find((left + right).str());
    if (right.empty() || l == ids.end() || r == ids.end() ||
        merged == ids.end())
      return f.error("tokenizer.ggml.merges",
                     "entry " + std::to_string(i) + " '" + m +
                         "' is not two tokens whose concatenation is a token");
    t->merges.push_back({l->second, r->second});
  }
  return Status::ok();
}

/// A token id stored under `key`, checked against the vocabulary; `dflt`
/// when absent.
Status readTokenId(const GgufFile &f, const std::string &key, size_t vocab,
                   int32_t &out, int32_t dflt = -1) {
  out = dflt;
  if (!f.find(key))
    return Status::ok();
  uint64_t id = 0;
  if (Status s = f.getUint(key, id); !s)
    return s;
  if (id >= vocab)
    return f.error(key, "is " + std::to_string(id) + ", outside the " +
                            std::to_string(vocab) + "-token vocabulary");
  out = int32_t(id);
  return Status::ok();
}

Status readGpt2(const GgufFile &f, TokenizerData *t) {
  std::string pre;
  if (Status s = f.getString("tokenizer.ggml.pre", "gpt2", pre); !s)
    return s;
  std::optional<std::string> pattern = pretokenizerFor(pre);
  if (!pattern)
    return f.error("tokenizer.ggml.pre",
                   "is '" + pre + "', which is not supported — supported: "
                   "gpt2, smollm, llama-bpe, qwen2");
  t->pretokenizer = *pattern;
  std::unordered_map<std::string, int32_t> ids;
  std::vector<int64_t> types;
  if (Status s = readVocab(f, t, ids, &types); !s)
    return s;
  return readMerges(f, t, ids);
}

/// llama.cpp turns every character outside the vocabulary into byte tokens
/// and fails on a byte it has no token for (it looks up <0x0A> when it
/// loads): a vocabulary without all 256 has no defined behaviour.
Status checkByteTokens(const GgufFile &f, const TokenizerData &t,
                       const std::vector<int64_t> &types) {
  std::vector<bool> haveByte(256, false);
  for (size_t id = 0; id < types.size(); ++id)
    if (types[id] == kTokenByte)
      haveByte[size_t(tok::byteTokenValue(t.vocab[id]))] = true;
  for (int b = 0; b < 256; ++b)
    if (!haveByte[b])
      return f.error("tokenizer.ggml.model",
                     "is 'llama' (SentencePiece), but the vocabulary has no "
                     "byte token " + tok::byteTokenName(uint8_t(b)) +
                         " (token type 6); llama.cpp needs all 256 for the "
                         "characters outside the vocabulary, so such a file "
                         "is not supported");
  return Status::ok();
}

/// Scores (0 for every token when absent, as llama.cpp takes them), the
/// byte, unknown and unused tokens of a "llama" vocabulary.
Status readSentencePieceVocab(const GgufFile &f, TokenizerData *t) {
  std::unordered_map<std::string, int32_t> ids;
  std::vector<int64_t> types;
  if (Status s = readVocab(f, t, ids, &types); !s)
    return s;
  t->scores.assign(t->vocab.size(), 0.0f);
  if (f.find("tokenizer.ggml.scores")) {
    const std::vector<GgufValue> *scores = nullptr;
    if (Status s = f.getArray("tokenizer.ggml.scores", GgufValueType::F32,
                              scores);
        !s)
      return s;
    if (scores->size() != t->vocab.size())
      return f.error("tokenizer.ggml.scores",
                     "has " + std::to_string(scores->size()) +
                         " entries for " + std::to_string(t->vocab.size()) +
                         " tokens");
    for (size_t i = 0; i < scores->size(); ++i) {
      if (std::isnan((*scores)[i].f))
        return f.error("tokenizer.ggml.scores",
                       "entry " + std::to_string(i) + " is NaN");
      t->scores[i] = float((*scores)[i].f);
    }
  }
  int32_t firstUnknown = -1;
  for (size_t id = 0; id < types.size(); ++id) {
    if (types[id] == kTokenUnused) {
      t->vocab[id].clear();
    } else if (types[id] == kTokenUnknown) {
      // Split out of the text like a control token, as llama.cpp does when
      // it parses special tokens (and tokenizers with "<unk>" added).
      t->addedTokens.push_back({int32_t(id), t->vocab[id], true});
      firstUnknown = firstUnknown < 0 ? int32_t(id) : firstUnknown;
    } else if (types[id] == kTokenByte) {
      int b = tok::byteTokenValue(t->vocab[id]);
      if (b < 0 || tok::byteTokenName(uint8_t(b)) != t->vocab[id])
        return f.error("tokenizer.ggml.tokens",
                       "token " + std::to_string(id) + " '" + t->vocab[id] +
                           "' has type byte but is not of the form <0xXX> "
                           "(two upper-case hex digits)");
      t->byteFallback = true;
    }
  }
  if (Status s = checkByteTokens(f, *t, types); !s)
    return s;
  return readTokenId(f, "tokenizer.ggml.unknown_token_id", t->vocab.size(),
                     t->unkId, firstUnknown);
}

Status readSentencePiece(const GgufFile &f, TokenizerData *t) {
  t->model = "sentencepiece_bpe";
  if (Status s = readSentencePieceVocab(f, t); !s)
    return s;
  bool spacePrefix = true;
  if (Status s = f.getBool("tokenizer.ggml.add_space_prefix", true,
                           spacePrefix);
      !s)
    return s;
  tok::SentencePieceOptions o;
  o.prefix = spacePrefix ? tok::SpacePrefix::Prepend : tok::SpacePrefix::None;
  o.decodeBytes = true;
  o.strip = spacePrefix ? tok::LeadingStrip::Space : tok::LeadingStrip::None;
  t->pretokenizer = tok::formatSentencePiecePretokenizer(o);
  t->decoder = tok::formatSentencePieceDecoder(o);
  t->fuseUnk = true; // as SentencePiece and converted tokenizer.json files
  return Status::ok();
}

} // namespace

Status readGgufTokenizer(const GgufFile &f, TokenizerData *t) {
  std::string model;
  if (Status s = f.getString("tokenizer.ggml.model", model); !s)
    return s;
  *t = TokenizerData();
  const bool llama = model == "llama";
  if (model != "gpt2" && !llama)
    return f.error("tokenizer.ggml.model",
                   "is '" + model + "', which is not supported — supported: "
                   "gpt2 (byte-level BPE), llama (SentencePiece BPE)");
  if (Status s = llama ? readSentencePiece(f, t) : readGpt2(f, t); !s)
    return s;
  // llama.cpp's defaults: a SentencePiece vocabulary has BOS 1 and EOS 2
  // and adds BOS; a BPE one has neither unless the file says so.
  const bool defaults = llama && t->vocab.size() > 2;
  if (Status s = readTokenId(f, "tokenizer.ggml.bos_token_id",
                             t->vocab.size(), t->bosId, defaults ? 1 : -1);
      !s)
    return s;
  if (Status s = readTokenId(f, "tokenizer.ggml.eos_token_id",
                             t->vocab.size(), t->eosId, defaults ? 2 : -1);
      !s)
    return s;
  if (Status s = f.getBool("tokenizer.ggml.add_bos_token", llama, t->addBos);
      !s)
    return s;
  if (t->addBos && t->bosId < 0)
    return f.error("tokenizer.ggml.add_bos_token",
                   "is true but there is no tokenizer.ggml.bos_token_id");
  std::string jinja;
  if (Status s = f.getString("tokenizer.chat_template", "", jinja); !s)
    return s;
  t->chatTemplate = detectChatTemplate(jinja);
  return Status::ok();
}

Status readGgufGeneration(const GgufFile &f, const TokenizerData &t,
                          GenerationDefaults *out) {
  *out = GenerationDefaults();
  // End of sequence (as read, defaults included) and, where the file names
  // them, end of turn and end of message: each ends a reply.
  if (t.eosId >= 0)
    out->eosIds.push_back(t.eosId);
  for (const char *key : {"tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    int32_t id = -1;
    if (Status s = readTokenId(f, key, t.vocab.size(), id); !s)
      return s;
    if (id >= 0 && std::find(out->eosIds.begin(), out->eosIds.end(), id) ==
                       out->eosIds.end())
      out->eosIds.push_back(id);
  }
  return Status::ok();
}

} // namespace ingot::compiler::gguf
