//===- GgufGetters.cpp - Typed reads of GGUF metadata ---------------------===//
//
// Writers disagree on integer widths (block_count is u32 in llama.cpp's
// converter, i32 or u64 in others), so integer getters take any integer
// type that holds the value; a float getter takes f32 or f64.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufFile.h"

namespace ingot::compiler::gguf {

Status GgufFile::getUint(const std::string &key, uint64_t &out) const {
  const GgufValue *v = find(key);
  if (!v)
    return Status::error(path_ + ": missing metadata '" + key + "'");
  if (v->isUnsigned()) {
    out = v->u;
    return Status::ok();
  }
  if (v->isSigned() && v->i >= 0) {
    out = uint64_t(v->i);
    return Status::ok();
  }
  return error(key, "is " + ggufTypeName(*v) +
                        (v->isSigned() ? " " + std::to_string(v->i) : "") +
                        "; expected a non-negative integer");
}

Status GgufFile::getUint(const std::string &key, uint64_t dflt,
                         uint64_t &out) const {
  if (!find(key)) {
    out = dflt;
    return Status::ok();
  }
  return getUint(key, out);
}

Status GgufFile::getFloat(const std::string &key, double &out) const {
  const GgufValue *v = find(key);
  if (!v)
    return Status::error(path_ + ": missing metadata '" + key + "'");
  if (!v->isFloat())
    return error(key, "is " + ggufTypeName(*v) + "; expected f32 or f64");
  out = v->f;
  return Status::ok();
}

Status GgufFile::getFloat(const std::string &key, double dflt,
                          double &out) const {
  if (!find(key)) {
    out = dflt;
    return Status::ok();
  }
  return getFloat(key, out);
}

Status GgufFile::getBool(const std::string &key, bool dflt, bool &out) const {
  const GgufValue *v = find(key);
  if (!v) {
    out = dflt;
    return Status::ok();
  }
  if (v->type != GgufValueType::Bool)
    return error(key, "is " + ggufTypeName(*v) + "; expected bool");
  out = v->u != 0;
  return Status::ok();
}

Status GgufFile::getString(const std::string &key, std::string &out) const {
  const GgufValue *v = find(key);
  if (!v)
    return Status::error(path_ + ": missing metadata '" + key + "'");
  if (v->type != GgufValueType::String)
    return error(key, "is " + ggufTypeName(*v) + "; expected string");
  out = v->s;
  return Status::ok();
}

Status GgufFile::getString(const std::string &key, const std::string &dflt,
                           std::string &out) const {
  if (!find(key)) {
    out = dflt;
    return Status::ok();
  }
  return getString(key, out);
}

Status GgufFile::getArray(const std::string &key, GgufValueType elemType,
                          const std::vector<GgufValue> *&out) const {
  const GgufValue *v = find(key);
  if (!v)
    return Status::error(path_ + ": missing metadata '" + key + "'");
  GgufValue want;
  want.type = GgufValueType::Array;
  want.elemType = elemType;
  if (v->type != GgufValueType::Array || v->elemType != elemType)
    return error(key, "is " + ggufTypeName(*v) + "; expected " +
                          ggufTypeName(want));
  out = &v->array;
  return Status::ok();
}

} // namespace ingot::compiler::gguf
