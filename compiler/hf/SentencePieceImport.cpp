//===- SentencePieceImport.cpp - SentencePiece-style tokenizer.json -------===//
//
// Accepted, in the forms Hugging Face's converters write them:
//   normalizer     Sequence[Prepend("▁"), Replace(" ", "▁")] (Llama-2,
//                  Mistral, TinyLlama), Replace(" ", "▁") (Gemma), or none
//   pre_tokenizer  none after such a normalizer, else Metaspace("▁",
//                  prepend_scheme first/always/never, split true/false)
//   decoder        Sequence[Replace("▁", " "), ByteFallback?, Fuse?,
//                  Strip(" ", 1, 0)?] (Strip only after Fuse) or Metaspace
// Anything else is refused by name.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/SentencePieceImport.h"

#include "ingot/TokenizerFormat.h"

#include <vector>

namespace ingot::compiler {
namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;
using tok::SentencePieceOptions;
using tok::SpacePrefix;

constexpr llvm::StringLiteral kMark = "\xe2\x96\x81";

/// An error in tokenizer.json, relative to the file (importTokenizer puts
/// the file's path in front).
Status fail(const std::string &msg) { return Status::error(msg); }

/// The steps of a component: the members of a Sequence (under `listKey`),
/// or the component itself; empty for none (null or absent).
std::vector<const Object *> steps(const Value *v, const char *listKey) {
  std::vector<const Object *> out;
  const Object *o = v ? v->getAsObject() : nullptr;
  if (!o)
    return out;
  const Array *list = o->getArray(listKey);
  if (o->getString("type") != "Sequence" || !list) {
    out.push_back(o);
    return out;
  }
  for (const Value &e : *list)
    if (const Object *s = e.getAsObject())
      out.push_back(s);
  return out;
}

std::string typeName(const Object *o) {
  auto t = o->getString("type");
  return t ? t->str() : "?";
}

std::string describe(const std::vector<const Object *> &list) {
  std::string s;
  for (const Object *o : list)
    s += (s.empty() ? "" : ", ") + typeName(o);
  return list.size() == 1 ? s : "Sequence[" + s + "]";
}

/// A Replace step from `from` to `to` with a plain string pattern.
bool isReplace(const Object *o, llvm::StringRef from, llvm::StringRef to) {
  const Object *pattern = o->getObject("pattern");
  return typeName(o) == "Replace" && pattern &&
         pattern->getString("String") == from && o->getString("content") == to;
}

/// Metaspace's prefix scheme: prepend_scheme, or the older add_prefix_space
/// (true meaning "always"); `tokenizers` defaults to "always".
std::optional<SpacePrefix> metaspacePrefix(const Object *o) {
  if (o->getString("replacement") != kMark)
    return std::nullopt;
  std::string scheme =
      o->getString("prepend_scheme")
          .value_or(o->getBoolean("add_prefix_space").value_or(true) ? "always"
                                                                     : "never")
          .str();
  if (scheme == "first")
    return SpacePrefix::First;
  if (scheme == "always")
    return SpacePrefix::Always;
  if (scheme == "never")
    return SpacePrefix::None;
  return std::nullopt;
}

/// The normalizer: *replaces when it turns spaces into "▁" (and sets the
/// Prepend prefix when it also puts one in front).
Status readNormalizer(const Value *v, SentencePieceOptions *o, bool *replaces) {
  std::vector<const Object *> list = steps(v, "normalizers");
  bool prepend = false, unknown = false;
  *replaces = false;
  for (const Object *s : list) {
    if (isReplace(s, " ", kMark) && !*replaces)
      *replaces = true;
    else if (typeName(s) == "Prepend" && s->getString("prepend") == kMark &&
             !prepend)
      prepend = true;
    else
      unknown = true;
  }
  if (unknown || (prepend && !*replaces))
    return fail("normalizer " + describe(list) +
                " is not supported for a SentencePiece-style tokenizer; "
                "supported: none, Sequence[Prepend('▁'), Replace(' ', '▁')], "
                "Replace(' ', '▁')");
  o->prefix = prepend ? SpacePrefix::Prepend : SpacePrefix::None;
  return Status::ok();
}

Status readPreTokenizer(const Value *v, bool normalizerReplaces,
                        SentencePieceOptions *o) {
  std::vector<const Object *> list = steps(v, "pretokenizers");
  if (list.empty() && normalizerReplaces)
    return Status::ok();
  const char *supported = "; supported: none after a normalizer that "
                          "replaces ' ' by '▁', else Metaspace(replacement "
                          "'▁', prepend_scheme first/always/never)";
  if (list.size() != 1 || typeName(list[0]) != "Metaspace" ||
      normalizerReplaces)
    return fail("pre_tokenizer " +
                (list.empty() ? std::string("(none)") : describe(list)) +
                (normalizerReplaces ? " after the normalizer" : "") +
                " is not supported for a SentencePiece-style tokenizer" +
                supported);
  std::optional<SpacePrefix> prefix = metaspacePrefix(list[0]);
  if (!prefix)
    return fail("pre_tokenizer Metaspace has a replacement or "
                "prepend_scheme ingot does not know" +
                std::string(supported));
  o->prefix = *prefix;
  o->split = list[0]->getBoolean("split").value_or(true);
  return Status::ok();
}

Status readDecoder(const Value *v, SentencePieceOptions *o) {
  std::vector<const Object *> list = steps(v, "decoders");
  if (list.size() == 1 && typeName(list[0]) == "Metaspace") {
    std::optional<SpacePrefix> prefix = metaspacePrefix(list[0]);
    if (!prefix)
      return fail("decoder Metaspace has a replacement or prepend_scheme "
                  "ingot does not know");
    o->strip = *prefix == SpacePrefix::None ? tok::LeadingStrip::None
                                            : tok::LeadingStrip::FirstToken;
    return Status::ok();
  }
  // Replace first, then each optional step at most once, in this order.
  size_t i = 0;
  bool ok = !list.empty() && isReplace(list[i++], kMark, " ");
  bool fused = false;
  if (ok && i < list.size() && typeName(list[i]) == "ByteFallback")
    o->decodeBytes = true, ++i;
  if (ok && i < list.size() && typeName(list[i]) == "Fuse")
    fused = true, ++i;
  if (ok && fused && i < list.size() && typeName(list[i]) == "Strip" &&
      list[i]->getString("content") == " " &&
      list[i]->getInteger("start") == 1 && list[i]->getInteger("stop") == 0)
    o->strip = tok::LeadingStrip::Space, ++i;
  if (!ok || i != list.size())
    return fail("decoder " +
                (list.empty() ? std::string("(none)") : describe(list)) +
                " is not supported for a SentencePiece-style tokenizer; "
                "supported: Sequence[Replace('▁', ' '), ByteFallback, Fuse, "
                "Strip(' ', 1, 0)] (each but Replace optional, Strip only "
                "after Fuse), Metaspace");
  return Status::ok();
}

} // namespace

bool isSentencePieceStyle(const Object &root) {
  const Object *model = root.getObject("model");
  if (model && model->getBoolean("byte_fallback").value_or(false))
    return true;
  for (const Object *s : steps(root.get("normalizer"), "normalizers"))
    if (typeName(s) == "Prepend" || isReplace(s, " ", kMark))
      return true;
  for (const Object *s : steps(root.get("pre_tokenizer"), "pretokenizers"))
    if (typeName(s) == "Metaspace")
      return true;
  for (const Object *s : steps(root.get("decoder"), "decoders"))
    if (typeName(s) == "Metaspace" || typeName(s) == "ByteFallback" ||
        isReplace(s, kMark, " "))
      return true;
  return false;
}

Status readSentencePieceModel(const Object &model,
                              const std::map<std::string, int32_t> &ids,
                              TokenizerData *out) {
  out->byteFallback = model.getBoolean("byte_fallback").value_or(false);
  out->fuseUnk = model.getBoolean("fuse_unk").value_or(false);
  if (auto unk = model.getString("unk_token")) {
    auto it = ids.find(unk->str());
    if (it == ids.end())
      return fail("model.unk_token '" + unk->str() + "' is not in model.vocab");
    out->unkId = it->second;
  }
  return Status::ok();
}

Status readSentencePieceText(const Object &root, std::string *pretokenizer,
                             std::string *decoder) {
  SentencePieceOptions o;
  bool replaces = false;
  if (Status s = readNormalizer(root.get("normalizer"), &o, &replaces); !s)
    return s;
  if (Status s = readPreTokenizer(root.get("pre_tokenizer"), replaces, &o); !s)
    return s;
  if (Status s = readDecoder(root.get("decoder"), &o); !s)
    return s;
  if (const Object *model = root.getObject("model"))
    o.ignoreMerges = model->getBoolean("ignore_merges").value_or(false);
  *pretokenizer = tok::formatSentencePiecePretokenizer(o);
  *decoder = tok::formatSentencePieceDecoder(o);
  return Status::ok();
}

} // namespace ingot::compiler
