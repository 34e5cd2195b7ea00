//===- SafetensorsHeader.cpp - Reading a safetensors file's JSON header ---===//
//
// The header is untrusted: its size is capped before it is read, its JSON
// nesting is capped (JsonLimits.h), and every tensor entry's dtype, shape
// and offsets are checked before anything trusts them.
//
//===----------------------------------------------------------------------===//
#include "compiler/JsonLimits.h"
#include "compiler/hf/Safetensors.h"
#include "ingot/PosixRead.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace ingot::compiler::hf {
namespace {

/// The reference implementation refuses headers over 100 MB; a header that
/// large would describe millions of tensors, so anything bigger is damage.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

/// `__metadata__` maps strings to strings.
Status checkMetadata(const std::string &p, const llvm::json::Value &value) {
  const llvm::json::Object *meta = value.getAsObject();
  if (!meta)
    return Status::error(p + ": '__metadata__' is not an object");
  for (const auto &[mk, mv] : *meta)
    if (!mv.getAsString())
      return Status::error(p + ": '__metadata__' entry " + quote(mk.str()) +
                           " is not a string");
  return Status::ok();
}

/// Fills t's dtype from `entry`; `where` names the file and tensor.
Status parseDtype(const std::string &where, const llvm::json::Object &entry,
                  SafetensorsTensor &t) {
  std::optional<llvm::StringRef> dtype = entry.getString("dtype");
  if (!dtype)
    return Status::error(where + "missing string 'dtype'");
  t.dtypeName = dtype->str();
  t.elementSize = safetensorsElementSize(*dtype);
  if (!t.elementSize)
    return Status::error(where + "unknown dtype '" + t.dtypeName +
                         "' — known: F64, F32, F16, BF16, I64, I32, I16, "
                         "I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2");
  if (*dtype == "F32")
    t.dtype = DType::F32;
  else if (*dtype == "F16")
    t.dtype = DType::F16;
  else if (*dtype == "BF16")
    t.dtype = DType::BF16;
  return Status::ok();
}

/// Fills t's shape from `entry` and `bytes` with numel × element size;
/// `overflow` when that exceeds 64 bits (a bogus shape).
Status parseShape(const std::string &where, const llvm::json::Object &entry,
                  SafetensorsTensor &t, uint64_t &bytes, bool &overflow) {
  const llvm::json::Array *shape = entry.getArray("shape");
  if (!shape)
    return Status::error(where + "missing array 'shape'");
  bytes = t.elementSize;
  overflow = false;
  for (const llvm::json::Value &d : *shape) {
    std::optional<int64_t> v = d.getAsInteger();
    if (!v || *v < 0)
      return Status::error(where + "shape has an entry that is not a "
                                   "non-negative integer");
    t.shape.push_back(*v);
    if (*v != 0 && bytes > UINT64_MAX / static_cast<uint64_t>(*v))
      overflow = true;
    else
      bytes *= static_cast<uint64_t>(*v);
  }
  return Status::ok();
}

/// One tensor's header entry: dtype, shape, and data offsets that lie in
/// the data region of `dataSize` bytes and span exactly shape × dtype.
Status parseTensorEntry(const std::string &where,
                        const llvm::json::Value &value, uint64_t dataSize,
                        SafetensorsTensor &t) {
  const llvm::json::Object *entry = value.getAsObject();
  if (!entry)
    return Status::error(where + "the header entry is not an object");
  if (Status s = parseDtype(where, *entry, t); !s)
    return s;
  uint64_t bytes = 0;
  bool overflow = false;
  if (Status s = parseShape(where, *entry, t, bytes, overflow); !s)
    return s;
  const llvm::json::Array *offsets = entry->getArray("data_offsets");
  std::optional<int64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = (*offsets)[0].getAsInteger();
    end = (*offsets)[1].getAsInteger();
  }
  if (!begin || !end || *begin < 0 || *end < *begin)
    return Status::error(where + "'data_offsets' must be [begin, end] with "
                                 "0 <= begin <= end");
  t.begin = static_cast<uint64_t>(*begin);
  t.end = static_cast<uint64_t>(*end);
  if (t.end > dataSize)
    return Status::error(where + "data_offsets [" + std::to_string(t.begin) +
                         ", " + std::to_string(t.end) +
                         "] lie outside the data region of " +
                         std::to_string(dataSize) + " bytes");
  if (overflow || t.end - t.begin != bytes)
    return Status::error(
        where + "data_offsets span " + std::to_string(t.end - t.begin) +
        " bytes, but shape " + shapeString(t.shape) + " of " + t.dtypeName +
        " needs " + (overflow ? "more than 2^64" : std::to_string(bytes)));
  return Status::ok();
}

} // namespace

Status SafetensorsFile::readHeaderText(uint64_t fileSize, std::string &text) {
  const std::string &p = path_;
  unsigned char lenBytes[8];
  if (fileSize < 8 || !preadAll(fd_, lenBytes, 8, 0))
    return Status::error(p + ": truncated safetensors file (" +
                         std::to_string(fileSize) +
                         " bytes, shorter than the 8-byte header length)");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | lenBytes[i];
  if (headerLen > fileSize - 8)
    return Status::error(p + ": header length " + std::to_string(headerLen) +
                         " runs past the end of the file (" +
                         std::to_string(fileSize) +
                         " bytes): truncated or not a safetensors file");
  if (headerLen > kMaxHeaderBytes)
    return Status::error(p + ": header length " + std::to_string(headerLen) +
                         " exceeds the limit of " +
                         std::to_string(kMaxHeaderBytes) + " bytes");
  dataStart_ = 8 + headerLen;
  dataSize_ = fileSize - dataStart_;

  text.assign(headerLen, '\0');
  if (!preadAll(fd_, text.data(), headerLen, 8))
    return Status::error(p +
                         ": cannot read the header: " + std::strerror(errno));
  return Status::ok();
}

Status SafetensorsFile::parseHeader(uint64_t fileSize) {
  const std::string &p = path_;
  std::string text;
  if (Status s = readHeaderText(fileSize, text); !s)
    return s;
  llvm::json::Value json(nullptr);
  if (Status s = parseJson(p, text, json, "the header", /*textOffset=*/8); !s)
    return s;
  const llvm::json::Object *root = json.getAsObject();
  if (!root)
    return Status::error(p + ": the header is not a JSON object");

  // JSON objects iterate in hash order; sorted keys make the first error
  // reported the same on every run.
  std::vector<std::string> keys;
  for (const auto &entry : *root)
    keys.push_back(entry.first.str());
  std::sort(keys.begin(), keys.end());
  for (std::string &key : keys) {
    const llvm::json::Value &value = *root->get(key);
    if (key == "__metadata__") {
      if (Status s = checkMetadata(p, value); !s)
        return s;
      continue;
    }
    SafetensorsTensor t;
    if (Status s = parseTensorEntry(p + ": tensor " + quote(key) + ": ", value,
                                    dataSize_, t);
        !s)
      return s;
    tensors_.emplace(std::move(key), std::move(t));
  }
  return checkCoverage();
}

} // namespace ingot::compiler::hf
