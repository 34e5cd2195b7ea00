//===- TokenizerImport.cpp - tokenizer.json into TokenizerData ------------===//
//
// Accepts exactly the BPE configurations whose behaviour the runtime
// tokenizer reproduces — byte-level (runtime/src/tokenizer/PreTokenizer.h)
// or SentencePiece-style (SentencePieceImport.h) — and refuses everything
// else by name, so an artifact never carries a tokenizer that silently
// encodes differently from Hugging Face `tokenizers`.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/TokenizerImport.h"

#include "compiler/hf/SentencePieceImport.h"
#include "compiler/hf/TokenizerConfigImport.h"
#include "ingot/ByteLevel.h"

#include "llvm/Support/JSON.h"

#include <filesystem>
#include <map>

namespace ingot::compiler {
namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

// The split patterns as they appear in tokenizer.json, JSON escapes decoded.
constexpr llvm::StringLiteral kGpt2Pattern =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
constexpr llvm::StringLiteral kLlama3Pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr llvm::StringLiteral kQwen2Pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Ids are dense vector indices; real vocabularies stay far below this.
constexpr int64_t kMaxId = int64_t(1) << 22;

/// An error in tokenizer.json. The readers below report what is wrong
/// relative to the file; importTokenizer puts the file's path in front.
Status fail(const std::string &msg) { return Status::error(msg); }

std::string typeOf(const Value *v) {
  const Object *o = v ? v->getAsObject() : nullptr;
  auto t = o ? o->getString("type") : std::nullopt;
  return t ? t->str() : o ? "?" : "(none)";
}

/// "ByteLevel" or "Sequence[Split, ByteLevel]", for messages.
std::string describe(const std::vector<const Object *> &steps) {
  std::string s;
  for (const Object *o : steps) {
    auto t = o->getString("type");
    s += (s.empty() ? "" : ", ") + (t ? t->str() : std::string("?"));
  }
  return steps.size() == 1 ? s : "Sequence[" + s + "]";
}

/// The pattern family of a pre_tokenizer, or an error naming what it is.
Status readPreTokenizer(const Value *v, std::string *pattern) {
  std::vector<const Object *> steps;
  const Object *top = v ? v->getAsObject() : nullptr;
  if (!top)
    return fail("pre_tokenizer is missing; byte-level BPE "
                "needs a ByteLevel pre-tokenizer");
  if (top->getString("type") == "Sequence") {
    const Array *list = top->getArray("pretokenizers");
    for (size_t i = 0; list && i < list->size(); ++i)
      if (const Object *o = (*list)[i].getAsObject())
        steps.push_back(o);
  } else {
    steps.push_back(top);
  }
  auto byteLevel = [](const Object *o, bool useRegex) {
    return o->getString("type") == "ByteLevel" &&
           !o->getBoolean("add_prefix_space").value_or(false) &&
           o->getBoolean("use_regex").value_or(true) == useRegex;
  };
  if (steps.size() == 1 && byteLevel(steps[0], true)) {
    *pattern = "gpt2";
    return Status::ok();
  }
  if (steps.size() == 2 && steps[0]->getString("type") == "Digits" &&
      steps[0]->getBoolean("individual_digits").value_or(false) &&
      byteLevel(steps[1], true)) {
    *pattern = "gpt2-digits";
    return Status::ok();
  }
  if (steps.size() == 2 && steps[0]->getString("type") == "Split" &&
      byteLevel(steps[1], false)) {
    const Object *split = steps[0];
    const Object *pat = split->getObject("pattern");
    llvm::StringRef regex =
        pat ? pat->getString("Regex").value_or("") : llvm::StringRef();
    if (split->getString("behavior") != "Isolated" ||
        split->getBoolean("invert").value_or(false))
      return fail("pre_tokenizer Split must have behavior "
                  "Isolated and invert false");
    if (regex == kGpt2Pattern)
      *pattern = "gpt2";
    else if (regex == kLlama3Pattern)
      *pattern = "llama3";
    else if (regex == kQwen2Pattern)
      *pattern = "qwen2";
    else
      return fail("pre_tokenizer Split pattern is not one ingot knows (the "
                  "GPT-2, Llama-3 or Qwen2 regex)");
    return Status::ok();
  }
  return fail("pre_tokenizer " + describe(steps) +
              " is not supported; supported: ByteLevel(use_regex), "
              "Sequence[Split(GPT-2/Llama-3/Qwen2 regex), "
              "ByteLevel(use_regex=false)], Sequence[Digits("
              "individual_digits), ByteLevel(use_regex)], all without "
              "add_prefix_space");
}

/// "+nfc" for an NFC normalizer, "" for none; an error for anything else.
Status readNormalizer(const Value *v, std::string *flag) {
  if (!v || v->getAsNull())
    return Status::ok();
  const Object *o = v->getAsObject();
  std::vector<const Value *> parts;
  if (o && o->getString("type") == "Sequence" && o->getArray("normalizers")) {
    for (const Value &p : *o->getArray("normalizers"))
      parts.push_back(&p);
  } else {
    parts.push_back(v);
  }
  for (const Value *p : parts) {
    if (typeOf(p) != "NFC")
      return fail("normalizer.type is '" + typeOf(p) +
                  "'; supported: none, NFC");
    *flag = "+nfc";
  }
  return Status::ok();
}

/// Whether a and b could claim overlapping text: one contains the other, or
/// a suffix of one is a prefix of the other.
bool overlap(const std::string &a, const std::string &b) {
  if (a.find(b) != std::string::npos || b.find(a) != std::string::npos)
    return true;
  for (size_t k = 1; k < a.size() && k < b.size(); ++k)
    if (a.compare(a.size() - k, k, b, 0, k) == 0 ||
        b.compare(b.size() - k, k, a, 0, k) == 0)
      return true;
  return false;
}

/// Reads added_tokens, with the ids `tokenizers` gives them when it loads
/// the file (it ignores the stored id of a token that is not in the model
/// vocab and numbers such tokens from the vocab's size on, in order).
Status readAddedTokens(const Object &root,
                       const std::map<std::string, int32_t> &modelIds,
                       TokenizerData *out, bool normalizerPresent) {
  std::map<std::string, int32_t> assigned;
  int64_t next = int64_t(modelIds.size());
  const Array *list = root.getArray("added_tokens");
  std::vector<std::string> normalized, raw;
  for (size_t i = 0; list && i < list->size(); ++i) {
    std::string key = "added_tokens[" + std::to_string(i) + "]";
    const Object *o = (*list)[i].getAsObject();
    auto id = o ? o->getInteger("id") : std::nullopt;
    auto content = o ? o->getString("content") : std::nullopt;
    if (!id || !content || content->empty() || *id < 0 || *id >= kMaxId)
      return fail(key + " needs an id in [0, 2^22) and a "
                        "non-empty content");
    for (const char *flag : {"single_word", "lstrip", "rstrip"})
      if (o->getBoolean(flag).value_or(false))
        return fail(key + " ('" + content->str() + "') sets " + flag +
                    ", which ingot does not support");
    TokenizerData::AddedToken t;
    t.content = content->str();
    if (auto m = modelIds.find(t.content); m != modelIds.end())
      t.id = m->second;
    else if (auto a = assigned.find(t.content); a != assigned.end())
      t.id = a->second;
    else
      t.id = int32_t(next++);
    assigned.emplace(t.content, t.id);
    if (size_t(t.id) >= out->vocab.size())
      out->vocab.resize(size_t(t.id) + 1);
    t.special = o->getBoolean("special").value_or(false);
    (o->getBoolean("normalized").value_or(!t.special) ? normalized : raw)
        .push_back(t.content);
    out->addedTokens.push_back(std::move(t));
  }
  // `tokenizers` finds non-normalized tokens first and the others in what is
  // left; ingot does one pass, which is the same unless two such tokens can
  // claim overlapping text (or a normalizer changes the text around them).
  for (const std::string &a : normalized) {
    if (normalizerPresent)
      return fail("added token '" + a +
                  "' is normalized, which ingot does "
                  "not support with a normalizer");
    for (const std::string &b : raw)
      if (overlap(a, b))
        return fail("added tokens '" + a + "' (normalized) and '" + b +
                    "' (not normalized) overlap; ingot cannot match "
                    "them in the order tokenizers does");
  }
  return Status::ok();
}

/// An unknown token is harmless in byte-level BPE only if it can never be
/// produced: every byte has a token of its own.
Status checkByteLevelUnknown(const Object &model,
                             const std::map<std::string, int32_t> &ids) {
  if (auto unk = model.getString("unk_token"))
    for (int b = 0; b < 256; ++b) {
      std::string s;
      tok::appendByteLevel(std::string(1, char(b)), s);
      if (!ids.count(s))
        return fail("model.unk_token is set and byte " + std::to_string(b) +
                    " has no token, so BPE could "
                    "produce '" +
                    unk->str() + "'");
    }
  return Status::ok();
}

Status readModel(const Object &root, TokenizerData *out,
                 std::map<std::string, int32_t> *ids, bool *ignoreMerges) {
  const Object *model = root.getObject("model");
  if (!model)
    return fail("model is missing");
  std::string type = model->getString("type").value_or("BPE").str();
  if (type != "BPE")
    return fail("model.type is '" + type + "'; supported: BPE");
  if (auto d = model->getNumber("dropout"); d && *d > 0)
    return fail("model.dropout is set; BPE dropout is "
                "random and not supported");
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (auto s = model->getString(key); s && !s->empty())
      return fail(std::string("model.") + key + " is set; supported: none");
  *ignoreMerges = model->getBoolean("ignore_merges").value_or(false);

  const Object *vocab = model->getObject("vocab");
  if (!vocab || vocab->empty())
    return fail("model.vocab is missing or empty");
  std::map<int64_t, std::string> byId;
  std::map<std::string, int32_t> &byToken = *ids;
  for (const auto &[token, idValue] : *vocab) {
    auto id = idValue.getAsInteger();
    if (!id || *id < 0 || *id >= kMaxId)
      return fail("model.vocab['" + token.str() +
                  "'] is not an id in [0, 2^22)");
    if (!byId.emplace(*id, token.str()).second)
      return fail("model.vocab gives id " + std::to_string(*id) + " twice");
    byToken[token.str()] = int32_t(*id);
  }
  out->vocab.assign(size_t(byId.rbegin()->first + 1), "");
  for (auto &[id, token] : byId)
    out->vocab[id] = std::move(token);

  const Array *merges = model->getArray("merges");
  for (size_t i = 0; merges && i < merges->size(); ++i) {
    std::string key = "model.merges[" + std::to_string(i) + "]";
    std::string left, right;
    const Value &m = (*merges)[i];
    if (auto s = m.getAsString()) { // legacy "left right"
      size_t space = s->find(' ');
      if (space == llvm::StringRef::npos ||
          s->find(' ', space + 1) != llvm::StringRef::npos)
        return fail(key + " is not 'left right'");
      left = s->substr(0, space).str(), right = s->substr(space + 1).str();
    } else if (const Array *pair = m.getAsArray(); pair && pair->size() == 2 &&
                                                   (*pair)[0].getAsString() &&
                                                   (*pair)[1].getAsString()) {
      left = (*pair)[0].getAsString()->str();
      right = (*pair)[1].getAsString()->str();
    } else {
      return fail(key + " is not a pair of tokens");
    }
    auto l = byToken.find(left), r = byToken.find(right);
    if (l == byToken.end() || r == byToken.end() ||
        !byToken.count(left + right))
      return fail(key + " ('" + left + "', '" + right +
                  "') uses or makes a token that is "
                  "not in model.vocab");
    out->merges.emplace_back(l->second, r->second);
  }
  if (out->model == "sentencepiece_bpe")
    return readSentencePieceModel(*model, byToken, out);
  return checkByteLevelUnknown(*model, byToken);
}

/// The id of the special token the post-processor puts before the text
/// (TemplateProcessing "single": [SpecialToken, $A, ...]), or -1.
Status readPostProcessor(const Object &root, int32_t *leading) {
  *leading = -1;
  const Object *pp = root.getObject("post_processor");
  std::vector<const Object *> procs;
  if (pp && pp->getString("type") == "Sequence" && pp->getArray("processors"))
    for (const Value &p : *pp->getArray("processors"))
      procs.push_back(p.getAsObject());
  else if (pp)
    procs.push_back(pp);
  for (const Object *p : procs) {
    if (!p || p->getString("type") != "TemplateProcessing")
      continue;
    const Array *single = p->getArray("single");
    const Object *first =
        single && !single->empty() ? (*single)[0].getAsObject() : nullptr;
    const Object *special = first ? first->getObject("SpecialToken") : nullptr;
    if (!special)
      continue;
    auto name = special->getString("id");
    const Object *map = p->getObject("special_tokens");
    const Object *entry = name && map ? map->getObject(*name) : nullptr;
    const Array *ids = entry ? entry->getArray("ids") : nullptr;
    auto id = ids && ids->size() == 1 ? (*ids)[0].getAsInteger() : std::nullopt;
    if (!id || *id < 0 || *id > INT32_MAX)
      return fail("post_processor.special_tokens does not "
                  "give one id for the leading token");
    *leading = int32_t(*id);
  }
  return Status::ok();
}

/// Everything tokenizer.json says, read from its top-level object; errors
/// are relative to the file. `leading` is the post-processor's first token.
Status readTokenizerJson(const Object &root, TokenizerData &t,
                         int32_t &leading) {
  const bool sentencePiece = isSentencePieceStyle(root);
  if (sentencePiece)
    t.model = "sentencepiece_bpe";
  std::string nfc;
  bool ignoreMerges = false;
  if (!sentencePiece) {
    if (Status s = readNormalizer(root.get("normalizer"), &nfc); !s)
      return s;
  }
  std::map<std::string, int32_t> modelIds;
  if (Status s = readModel(root, &t, &modelIds, &ignoreMerges); !s)
    return s;
  bool normalizerPresent =
      !nfc.empty() || (sentencePiece && root.getObject("normalizer"));
  if (Status s = readAddedTokens(root, modelIds, &t, normalizerPresent); !s)
    return s;
  if (sentencePiece) {
    if (Status s = readSentencePieceText(root, &t.pretokenizer, &t.decoder); !s)
      return s;
  } else {
    std::string pattern;
    if (Status s = readPreTokenizer(root.get("pre_tokenizer"), &pattern); !s)
      return s;
    if (std::string d = typeOf(root.get("decoder")); d != "ByteLevel")
      return fail("decoder.type is '" + d +
                  "'; supported: ByteLevel (or, "
                  "for SentencePiece-style '▁' spaces, Replace/ByteFallback/"
                  "Fuse/Strip or Metaspace)");
    t.pretokenizer = pattern + nfc + (ignoreMerges ? "+ignore_merges" : "");
  }
  return readPostProcessor(root, &leading);
}

} // namespace

Status importTokenizer(const std::string &dir, TokenizerData *out) {
  const std::string path =
      (std::filesystem::path(dir) / "tokenizer.json").string();
  Value json(nullptr);
  bool found;
  if (Status s = readJson(path, &json, &found); !s)
    return s;
  if (!found)
    return Status::error("tokenizer.json: not found in " + dir);
  const Object *root = json.getAsObject();
  if (!root)
    return Status::error(path + ": the top level is not an object");
  TokenizerData t;
  int32_t leading = -1;
  if (Status s = readTokenizerJson(*root, t, leading); !s)
    return Status::error(path + ": " + s.message());
  if (leading >= int64_t(t.vocab.size()))
    return Status::error(path + ": post_processor's leading token id " +
                         std::to_string(leading) +
                         " is not a token id (the "
                         "vocabulary has " +
                         std::to_string(t.vocab.size()) + ")");
  if (Status s = importTokenizerConfig(dir, leading, &t); !s)
    return s;
  *out = std::move(t);
  return Status::ok();
}

} // namespace ingot::compiler
