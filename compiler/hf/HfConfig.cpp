//===- HfConfig.cpp - Typed access to Hugging Face JSON files -------------===//
#include "compiler/hf/HfConfig.h"
#include "compiler/JsonLimits.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <sstream>

namespace ingot::compiler::hf {

int64_t configSizeLimit(llvm::StringRef key) {
  return llvm::StringSwitch<int64_t>(key)
      .Cases({"num_hidden_layers", "n_layer"}, 1024)
      .Cases({"hidden_size", "n_embd"}, int64_t(1) << 20)
      .Cases({"intermediate_size", "n_inner"}, int64_t(1) << 22)
      .Cases({"num_attention_heads", "num_key_value_heads", "n_head"}, 4096)
      .Case("head_dim", int64_t(1) << 16)
      .Case("vocab_size", int64_t(1) << 24)
      .Cases({"max_position_embeddings", "n_positions"}, int64_t(1) << 24)
      .Default(0);
}

Status HfJson::load(const std::string &path, std::unique_ptr<HfJson> &out) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return Status::error(path +
                         ": cannot read: " + buffer.getError().message());
  llvm::json::Value json(nullptr);
  if (Status s = parseJson(path, (*buffer)->getBuffer(), json); !s)
    return s;
  llvm::json::Object *object = json.getAsObject();
  if (!object)
    return Status::error(path + ": the top level is not a JSON object");
  out = std::make_unique<HfJson>(path, "", std::move(*object));
  return Status::ok();
}

const llvm::json::Value *HfJson::lookup(llvm::StringRef key) const {
  const llvm::json::Value *v = object_.get(key);
  return v && v->kind() != llvm::json::Value::Null ? v : nullptr;
}

bool HfJson::has(llvm::StringRef key) const { return lookup(key) != nullptr; }

bool HfJson::isNull(llvm::StringRef key) const {
  const llvm::json::Value *v = object_.get(key);
  return v && v->kind() == llvm::json::Value::Null;
}

Status HfJson::error(llvm::StringRef key, const std::string &what) const {
  return Status::error(path_ + ": '" + keyName(key) + "' " + what);
}

Status HfJson::getInt(llvm::StringRef key, int64_t &out) const {
  const llvm::json::Value *v = lookup(key);
  if (!v)
    return error(key, "is missing (an integer is required)");
  std::optional<int64_t> i = v->getAsInteger();
  if (!i)
    return error(key, "must be an integer");
  out = *i;
  return Status::ok();
}

Status HfJson::getInt(llvm::StringRef key, int64_t dflt, int64_t &out) const {
  if (!has(key)) {
    out = dflt;
    return Status::ok();
  }
  return getInt(key, out);
}

Status HfJson::getPositive(llvm::StringRef key, int64_t &out,
                           int64_t min) const {
  if (Status s = getInt(key, out); !s)
    return s;
  if (out < min)
    return error(key, "is " + std::to_string(out) +
                          ", must be >= " + std::to_string(min));
  return Status::ok();
}

Status HfJson::getDouble(llvm::StringRef key, double &out) const {
  const llvm::json::Value *v = lookup(key);
  if (!v)
    return error(key, "is missing (a number is required)");
  std::optional<double> d = v->getAsNumber();
  if (!d)
    return error(key, "must be a number");
  out = *d;
  return Status::ok();
}

Status HfJson::getDouble(llvm::StringRef key, double dflt, double &out) const {
  if (!has(key)) {
    out = dflt;
    return Status::ok();
  }
  return getDouble(key, out);
}

Status HfJson::getEpsilon(llvm::StringRef key, double dflt, double &out) const {
  if (Status s = getDouble(key, dflt, out); !s)
    return s;
  const float asF32 = float(out);
  if (!(asF32 > 0) || !std::isfinite(asF32)) {
    std::ostringstream value;
    value << out;
    return error(key, "is " + value.str() +
                          "; it must be positive and finite as an f32");
  }
  return Status::ok();
}

Status HfJson::getBool(llvm::StringRef key, bool dflt, bool &out) const {
  const llvm::json::Value *v = lookup(key);
  if (!v) {
    out = dflt;
    return Status::ok();
  }
  std::optional<bool> b = v->getAsBoolean();
  if (!b)
    return error(key, "must be true or false");
  out = *b;
  return Status::ok();
}

Status HfJson::getString(llvm::StringRef key, std::string &out) const {
  const llvm::json::Value *v = lookup(key);
  if (!v)
    return error(key, "is missing (a string is required)");
  std::optional<llvm::StringRef> s = v->getAsString();
  if (!s)
    return error(key, "must be a string");
  out = s->str();
  return Status::ok();
}

Status HfJson::getString(llvm::StringRef key, const std::string &dflt,
                         std::string &out) const {
  if (!has(key)) {
    out = dflt;
    return Status::ok();
  }
  return getString(key, out);
}

Status HfJson::getIntList(llvm::StringRef key,
                          std::vector<int64_t> &out) const {
  const llvm::json::Value *v = lookup(key);
  if (!v)
    return Status::ok();
  if (std::optional<int64_t> i = v->getAsInteger()) {
    out = {*i};
    return Status::ok();
  }
  const llvm::json::Array *list = v->getAsArray();
  if (!list)
    return error(key, "must be an integer or a list of integers");
  std::vector<int64_t> values;
  for (const llvm::json::Value &e : *list) {
    std::optional<int64_t> i = e.getAsInteger();
    if (!i)
      return error(key, "must be an integer or a list of integers");
    values.push_back(*i);
  }
  out = std::move(values);
  return Status::ok();
}

Status HfJson::getSize(llvm::StringRef key, int64_t &out) const {
  return getInRange(key, 1, configSizeLimit(key), out);
}

Status HfJson::getSize(llvm::StringRef key, int64_t dflt, int64_t &out) const {
  if (!has(key)) {
    out = dflt;
    return Status::ok();
  }
  return getSize(key, out);
}

Status HfJson::getInRange(llvm::StringRef key, int64_t min, int64_t max,
                          int64_t &out) const {
  if (Status s = getInt(key, out); !s)
    return s;
  if (out < min || out > max)
    return error(key, "is " + std::to_string(out) +
                          ", out of range (expected " + std::to_string(min) +
                          ".." + std::to_string(max) + ")");
  return Status::ok();
}

Status HfJson::getTokenIds(llvm::StringRef key, int64_t vocab,
                           const std::string &vocabFrom,
                           std::vector<int64_t> &out) const {
  out.clear();
  const llvm::json::Value *v = lookup(key);
  if (!v)
    return Status::ok();
  const bool listAllowed = key == "eos_token_id";
  const llvm::json::Array *list = v->getAsArray();
  std::vector<const llvm::json::Value *> items;
  if (list && listAllowed)
    for (const llvm::json::Value &e : *list)
      items.push_back(&e);
  else
    items.push_back(v);
  for (const llvm::json::Value *e : items) {
    std::optional<int64_t> id = e->getAsInteger();
    if (!id)
      return error(key, listAllowed ? "must be a token id or a list of them"
                                    : "must be a token id (an integer)");
    if (*id == -1 && key == "pad_token_id")
      continue;
    if (*id < 0 || *id >= vocab)
      return error(
          key, "= " + std::to_string(*id) + " is not a token id (expected 0.." +
                   std::to_string(vocab - 1) + ", the " + vocabFrom + ")");
    out.push_back(*id);
  }
  return Status::ok();
}

Status HfJson::getStringList(llvm::StringRef key,
                             std::vector<std::string> &out) const {
  out.clear();
  const llvm::json::Value *v = lookup(key);
  if (!v)
    return Status::ok();
  const llvm::json::Array *list = v->getAsArray();
  if (!list)
    return error(key, "must be a list of strings");
  for (const llvm::json::Value &e : *list) {
    std::optional<llvm::StringRef> s = e.getAsString();
    if (!s)
      return error(key, "must be a list of strings");
    out.push_back(s->str());
  }
  return Status::ok();
}

Status HfJson::getObject(llvm::StringRef key,
                         std::optional<HfJson> &out) const {
  out.reset();
  const llvm::json::Value *v = lookup(key);
  if (!v)
    return Status::ok();
  const llvm::json::Object *o = v->getAsObject();
  if (!o)
    return error(key, "must be an object or null");
  out.emplace(path_, keyName(key) + ".", *o);
  return Status::ok();
}

Status HfJson::getFirstString(llvm::StringRef key, std::string &out) const {
  const llvm::json::Value *v = lookup(key);
  const llvm::json::Array *list = v ? v->getAsArray() : nullptr;
  if (!list || list->empty() || !(*list)[0].getAsString())
    return error(key, v ? "must be a non-empty list of strings"
                        : "is missing (a list of architecture names is "
                          "required)");
  out = (*list)[0].getAsString()->str();
  return Status::ok();
}

} // namespace ingot::compiler::hf
