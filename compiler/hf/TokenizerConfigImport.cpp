//===- TokenizerConfigImport.cpp - BOS/EOS and chat template --------------===//
#include "compiler/hf/TokenizerConfigImport.h"

#include "runtime/src/tokenizer/ByteLevel.h"

#include "llvm/Support/MemoryBuffer.h"

namespace ingot::compiler {
namespace {

using llvm::json::Object;
using llvm::json::Value;

Status fail(const char *file, const std::string &msg) {
  return Status::error(std::string(file) + ": " + msg);
}

/// A token given as "text" or {"content": "text", ...} (AddedToken form).
std::optional<std::string> tokenText(const Value *v) {
  if (!v)
    return std::nullopt;
  if (auto s = v->getAsString())
    return s->str();
  if (const Object *o = v->getAsObject())
    if (auto s = o->getString("content"))
      return s->str();
  return std::nullopt;
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

/// config.json's bos_token_id / eos_token_id: an int, or a list (first).
std::optional<int64_t> configId(const Object *config, const char *key) {
  const Value *v = config ? config->get(key) : nullptr;
  if (!v)
    return std::nullopt;
  if (const llvm::json::Array *list = v->getAsArray())
    return list->empty() ? std::nullopt : (*list)[0].getAsInteger();
  return v->getAsInteger();
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

Status readJson(const std::string &dir, const char *name, Value *out,
                bool *found) {
  std::string path = dir + "/" + name;
  auto buf = llvm::MemoryBuffer::getFile(path);
  *found = bool(buf);
  if (!buf) {
    if (buf.getError() == std::errc::no_such_file_or_directory)
      return Status::ok();
    return fail(name, "cannot read " + path + ": " + buf.getError().message());
  }
  llvm::Expected<Value> v = llvm::json::parse((*buf)->getBuffer());
  if (!v)
    return fail(name, "invalid JSON: " + llvm::toString(v.takeError()));
  *out = std::move(*v);
  return Status::ok();
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

Status importTokenizerConfig(const std::string &dir, int32_t leadingId,
                             TokenizerData *t) {
  const char *kFile = "tokenizer_config.json";
  Value tcJson(nullptr), configJson(nullptr);
  bool haveTc, haveConfig;
  if (Status s = readJson(dir, kFile, &tcJson, &haveTc); !s)
    return s;
  if (Status s = readJson(dir, "config.json", &configJson, &haveConfig); !s)
    return s;
  const Object *tc = tcJson.getAsObject();
  const Object *config = configJson.getAsObject();
  if (haveTc && !tc)
    return fail(kFile, "the top level is not an object");

  int64_t ids[2] = {-1, -1};
  const char *names[2] = {"bos_token", "eos_token"};
  for (int k = 0; k < 2; ++k) {
    if (auto text = tokenText(tc ? tc->get(names[k]) : nullptr)) {
      auto id = tokenId(*t, *text);
      if (!id)
        return fail(kFile, std::string(names[k]) + " '" + *text +
                               "' is not a token of tokenizer.json");
      ids[k] = *id;
    } else if (auto id =
                   configId(config, k ? "eos_token_id" : "bos_token_id")) {
      ids[k] = *id;
    }
  }
  if (ids[0] < 0)
    ids[0] = leadingId;
  for (int k = 0; k < 2; ++k)
    if (ids[k] < -1 || ids[k] >= int64_t(t->vocab.size()))
      return fail("config.json", std::string(names[k]) + "_id " +
                                     std::to_string(ids[k]) +
                                     " is not a token id");
  t->bosId = int32_t(ids[0]);
  t->eosId = int32_t(ids[1]);

  auto addBos = tc ? tc->getBoolean("add_bos_token") : std::nullopt;
  t->addBos = addBos.value_or(leadingId >= 0);
  if (t->addBos && t->bosId < 0)
    return fail(kFile, "add_bos_token is true but there is no BOS token");

  // chat_template: a string, or a list of {name, template} (use "default").
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
  if (jinja.empty()) { // newer exports keep it in a file of its own
    if (auto buf = llvm::MemoryBuffer::getFile(dir + "/chat_template.jinja"))
      jinja = (*buf)->getBuffer().str();
  }
  t->chatTemplate = detectChatTemplate(jinja);
  return Status::ok();
}

} // namespace ingot::compiler
