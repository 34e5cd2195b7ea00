//===- GgufImportTokenizer.cpp - tokenizer.ggml.* into TokenizerData ------===//
//
// A "gpt2" GGUF vocabulary is byte-level BPE as tokenizer.json has it: the
// tokens are stored in the byte-to-unicode alphabet, merges as "left right"
// strings in priority order, and `tokenizer.ggml.pre` names the split
// pattern. Control and user-defined tokens are tokenizer.json's added
// tokens (special or not), so chat markers encode to their single ids.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufImportInternal.h"
#include "compiler/hf/TokenizerConfigImport.h"

#include "llvm/ADT/StringRef.h"

#include <unordered_map>

namespace ingot::compiler::gguf {
namespace {

// llama.cpp's token types (tokenizer.ggml.token_type).
constexpr int64_t kTokenControl = 3, kTokenUserDefined = 4;
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

Status readVocab(const GgufFile &f, TokenizerData *t,
                 std::unordered_map<std::string, int32_t> &ids) {
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
  const std::vector<GgufValue> *types = nullptr;
  if (f.find("tokenizer.ggml.token_type")) {
    if (Status s = f.getArray("tokenizer.ggml.token_type", GgufValueType::I32,
                              types);
        !s)
      return s;
    if (types->size() != tokens->size())
      return f.error("tokenizer.ggml.token_type",
                     "has " + std::to_string(types->size()) +
                         " entries for " + std::to_string(tokens->size()) +
                         " tokens");
    for (size_t id = 0; id < types->size(); ++id) {
      int64_t type = (*types)[id].i;
      if (type == kTokenControl || type == kTokenUserDefined)
        t->addedTokens.push_back(
            {int32_t(id), t->vocab[id], type == kTokenControl});
    }
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

/// A token id stored under `key`, checked against the vocabulary; -1 when
/// absent.
Status readTokenId(const GgufFile &f, const std::string &key, size_t vocab,
                   int32_t &out) {
  out = -1;
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

} // namespace

Status readGgufTokenizer(const GgufFile &f, TokenizerData *t) {
  std::string model, pre;
  if (Status s = f.getString("tokenizer.ggml.model", model); !s)
    return s;
  if (model != "gpt2")
    return f.error("tokenizer.ggml.model",
                   "is '" + model + "'" +
                       (model == "llama" ? " (SentencePiece)" : "") +
                       ", which is not supported yet — supported: gpt2 "
                       "(byte-level BPE)");
  if (Status s = f.getString("tokenizer.ggml.pre", "gpt2", pre); !s)
    return s;
  std::optional<std::string> pattern = pretokenizerFor(pre);
  if (!pattern)
    return f.error("tokenizer.ggml.pre",
                   "is '" + pre + "', which is not supported — supported: "
                   "gpt2, smollm, llama-bpe, qwen2");
  *t = TokenizerData();
  t->pretokenizer = *pattern;
  std::unordered_map<std::string, int32_t> ids;
  if (Status s = readVocab(f, t, ids); !s)
    return s;
  if (Status s = readMerges(f, t, ids); !s)
    return s;
  if (Status s = readTokenId(f, "tokenizer.ggml.bos_token_id",
                             t->vocab.size(), t->bosId);
      !s)
    return s;
  if (Status s = readTokenId(f, "tokenizer.ggml.eos_token_id",
                             t->vocab.size(), t->eosId);
      !s)
    return s;
  // llama.cpp adds no BOS to a BPE vocabulary unless the file asks.
  if (Status s = f.getBool("tokenizer.ggml.add_bos_token", false, t->addBos);
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
  // End of sequence and, where the file names them, end of turn and end of
  // message: each ends a reply.
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
