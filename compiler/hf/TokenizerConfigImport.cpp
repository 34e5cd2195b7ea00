//===- TokenizerConfigImport.cpp - BOS/EOS and chat template --------------===//
#include "compiler/hf/TokenizerConfigImport.h"
#include "compiler/JsonLimits.h"
#include "compiler/hf/HfConfig.h"

#include "ingot/ByteLevel.h"

#include "llvm/Support/MemoryBuffer.h"

#include <filesystem>

namespace ingot::compiler {
namespace {

using llvm::json::Object;
using llvm::json::Value;

Status fail(const std::string &file, const std::string &msg) {
  return Status::error(file + ": " + msg);
}

/// A token of tokenizer_config.json (`key` of `tc`) given as "text" or
/// {"content": "text", ...} (AddedToken form); absent or null: nullopt.
Status tokenText(const std::string &file, const Object *tc, const char *key,
                 std::optional<std::string> &out) {
  out.reset();
  const Value *v = tc ? tc->get(key) : nullptr;
  if (!v || v->getAsNull())
    return Status::ok();
  if (auto s = v->getAsString()) {
    out = s->str();
    return Status::ok();
  }
  if (const Object *o = v->getAsObject())
    if (auto s = o->getString("content")) {
      out = s->str();
      return Status::ok();
    }
  return fail(file, std::string("'") + key +
                        "' must be a string, an object with a string "
                        "'content', or null");
}

/// The id of a token's text: an added token's, else the vocab entry of its
/// byte-level form (SentencePiece vocabularies hold the text itself).
std::optional<int32_t> tokenId(const TokenizerData &t, const std::string &s) {
  for (const TokenizerData::AddedToken &a : t.addedTokens)
    if (a.content == s)
      return a.id;
  std::string form;
  if (t.model == "sentencepiece_bpe")
    form = s;
  else
    tok::appendByteLevel(s, form);
  for (size_t i = 0; i < t.vocab.size(); ++i)
    if (t.vocab[i] == form)
      return int32_t(i);
  return std::nullopt;
}

/// config.json's bos_token_id / eos_token_id (the first of a list), which
/// must be ids of the tokenizer's vocabulary; -1 when absent or null.
Status configId(const std::string &file, const Object *config, const char *key,
                const TokenizerData &t, int64_t &out) {
  out = -1;
  if (!config)
    return Status::ok();
  hf::HfJson json(file, "", *config);
  std::vector<int64_t> ids;
  if (Status s = json.getTokenIds(
          key, int64_t(t.vocab.size()),
          std::to_string(t.vocab.size()) + " tokens of tokenizer.json", ids);
      !s)
    return s;
  if (!ids.empty())
    out = ids[0];
  return Status::ok();
}

/// The text of a Jinja string literal starting at s[i] (just after its
/// opening quote) up to `end`, if that span holds no closing quote, i.e. is
/// all one literal.
std::optional<std::string> literalSpan(const std::string &s, size_t i,
                                       size_t end) {
  std::string out;
  for (; i < end; ++i) {
    char c = s[i];
    if (c == '\'' || c == '"')
      return std::nullopt;
    if (c == '\\' && i + 1 < end) {
      char e = s[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      continue;
    }
    out += c;
  }
  return out;
}

/// The default system message of a ChatML template: a literal
/// '<|im_start|>system\n...<|im_end|>' that does not splice in a message.
std::string defaultSystemMessage(const std::string &jinja) {
  const std::string open = "<|im_start|>system", close = "<|im_end|>";
  for (size_t at = jinja.find(open); at != std::string::npos;
       at = jinja.find(open, at + 1)) {
    size_t i = at + open.size();
    if (jinja.compare(i, 1, "\n") == 0)
      i += 1;
    else if (jinja.compare(i, 2, "\\n") == 0)
      i += 2;
    else
      continue;
    size_t end = jinja.find(close, i);
    if (end == std::string::npos)
      break;
    if (auto text = literalSpan(jinja, i, end))
      return ":" + *text;
  }
  return "";
}

} // namespace

Status readJson(const std::string &path, Value *out, bool *found) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  *found = bool(buf);
  if (!buf) {
    if (buf.getError() == std::errc::no_such_file_or_directory)
      return Status::ok();
    return fail(path, "cannot read: " + buf.getError().message());
  }
  return parseJson(path, (*buf)->getBuffer(), *out);
}

std::string detectChatTemplate(const std::string &jinja) {
  if (jinja.find("<|im_start|>") != std::string::npos)
    return "chatml" + defaultSystemMessage(jinja);
  if (jinja.find("<|start_header_id|>") != std::string::npos)
    return "llama3";
  // Gemma 2's template raises on a system message; Gemma 3's folds it
  // into the first user turn.
  if (jinja.find("[INST]") != std::string::npos &&
      jinja.find("[SYSTEM_PROMPT]") == std::string::npos &&
      jinja.find("system") == std::string::npos)
    return "mistral"; // the v0.1 form: no system handling at all
  if (jinja.find("<start_of_turn>") != std::string::npos)
    return jinja.find("System role not supported") != std::string::npos
               ? "gemma-nosystem"
               : "gemma";
  return "";
}

namespace {

/// chat_template: a string, or a list of {name, template} (use "default");
/// newer exports keep it in chat_template.jinja instead.
std::string chatTemplateText(const std::string &dir, const Object *tc) {
  std::string jinja;
  if (const Value *ct = tc ? tc->get("chat_template") : nullptr) {
    if (auto s = ct->getAsString()) {
      jinja = s->str();
    } else if (const llvm::json::Array *list = ct->getAsArray()) {
      for (const Value &e : *list)
        if (const Object *o = e.getAsObject();
            o && o->getString("name") == "default" && o->getString("template"))
          jinja = o->getString("template")->str();
    }
  }
  if (jinja.empty())
    if (auto buf = llvm::MemoryBuffer::getFile(dir + "/chat_template.jinja"))
      jinja = (*buf)->getBuffer().str();
  return jinja;
}

/// BOS and EOS: tokenizer_config.json's bos_token / eos_token text, else
/// config.json's ids; the post-processor's leading token is the BOS when
/// neither names one.
Status readSpecialIds(const std::string &tcPath, const Object *tc,
                      const std::string &configPath, const Object *config,
                      int32_t leadingId, TokenizerData *t) {
  int64_t ids[2] = {-1, -1};
  const char *names[2] = {"bos_token", "eos_token"};
  for (int k = 0; k < 2; ++k) {
    std::optional<std::string> text;
    if (Status s = tokenText(tcPath, tc, names[k], text); !s)
      return s;
    if (text) {
      auto id = tokenId(*t, *text);
      if (!id)
        return fail(tcPath, std::string(names[k]) + " '" + *text +
                                "' is not a token of tokenizer.json");
      ids[k] = *id;
    } else if (Status s =
                   configId(configPath, config,
                            k ? "eos_token_id" : "bos_token_id", *t, ids[k]);
               !s) {
      return s;
    }
  }
  // transformers never reads pad_token's text into anything ingot uses,
  // but a value of the wrong type still says the file is damaged.
  std::optional<std::string> pad;
  if (Status s = tokenText(tcPath, tc, "pad_token", pad); !s)
    return s;
  if (ids[0] < 0)
    ids[0] = leadingId; // importTokenizer checked it against the vocabulary
  t->bosId = int32_t(ids[0]);
  t->eosId = int32_t(ids[1]);
  return Status::ok();
}

} // namespace

Status importTokenizerConfig(const std::string &dir, int32_t leadingId,
                             TokenizerData *t) {
  namespace fs = std::filesystem;
  const std::string tcPath = (fs::path(dir) / "tokenizer_config.json").string();
  const std::string configPath = (fs::path(dir) / "config.json").string();
  Value tcJson(nullptr), configJson(nullptr);
  bool haveTc, haveConfig;
  if (Status s = readJson(tcPath, &tcJson, &haveTc); !s)
    return s;
  if (Status s = readJson(configPath, &configJson, &haveConfig); !s)
    return s;
  const Object *tc = tcJson.getAsObject();
  const Object *config = configJson.getAsObject();
  if (haveTc && !tc)
    return fail(tcPath, "the top level is not an object");
  if (Status s = readSpecialIds(tcPath, tc, configPath, config, leadingId, t);
      !s)
    return s;

  const Value *addBosValue = tc ? tc->get("add_bos_token") : nullptr;
  auto addBos = addBosValue ? addBosValue->getAsBoolean() : std::nullopt;
  if (addBosValue && !addBosValue->getAsNull() && !addBos)
    return fail(tcPath, "'add_bos_token' must be true, false or null");
  t->addBos = addBos.value_or(leadingId >= 0);
  if (t->addBos && t->bosId < 0)
    return fail(tcPath, "add_bos_token is true but there is no BOS token");
  t->chatTemplate = detectChatTemplate(chatTemplateText(dir, tc));
  return Status::ok();
}

} // namespace ingot::compiler
