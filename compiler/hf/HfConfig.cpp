//===- HfConfig.cpp - Typed access to Hugging Face JSON files -------------===//
#include "compiler/hf/HfConfig.h"

#include "llvm/Support/MemoryBuffer.h"

namespace ingot::compiler::hf {

Status HfJson::load(const std::string &path, std::unique_ptr<HfJson> &out) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return Status::error(path +
                         ": cannot read: " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return Status::error(
        path + ": not valid JSON: " + llvm::toString(json.takeError()));
  llvm::json::Object *object = json->getAsObject();
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
