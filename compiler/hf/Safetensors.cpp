//===- Safetensors.cpp - Validated safetensors files and shards -----------===//
#include "compiler/hf/Safetensors.h"
#include "compiler/JsonLimits.h"
#include "compiler/PosixRead.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace ingot::compiler::hf {
namespace {

/// The reference implementation refuses headers over 100 MB; a header that
/// large would describe millions of tensors, so anything bigger is damage.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;
/// Streaming reads go through a buffer of this size.
constexpr uint64_t kChunkBytes = 4u << 20;

std::string quote(llvm::StringRef s) {
  // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) about
  // "'" + std::string once this is inlined.
  std::string out = "'";
  out += s;
  out += '\'';
  return out;
}

} // namespace

size_t safetensorsElementSize(llvm::StringRef dtype) {
  return llvm::StringSwitch<size_t>(dtype)
      .Cases({"F64", "I64", "U64"}, 8)
      .Cases({"F32", "I32", "U32"}, 4)
      .Cases({"F16", "BF16", "I16", "U16"}, 2)
      .Cases({"BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2"}, 1)
      .Default(0);
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status SafetensorsFile::open(const std::string &path,
                             std::unique_ptr<SafetensorsFile> &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile(path, fd));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error(path + ": not a regular file");
  if (Status s = file->parseHeader(static_cast<uint64_t>(st.st_size)); !s)
    return s;
  out = std::move(file);
  return Status::ok();
}

namespace {

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

// Overlapping tensors would alias each other's bytes. Gaps and trailing
// bytes are refused too: the format requires the tensors to cover the data
// region exactly, the `safetensors` package (0.8) refuses such files
// ("invalid offset for tensor", "file not fully covered"), and bytes no
// tensor owns are what a header from another file or a spliced file
// leaves behind.
Status SafetensorsFile::checkCoverage() const {
  const std::string &p = path_;
  std::vector<const std::pair<const std::string, SafetensorsTensor> *> order;
  for (const auto &entry : tensors_)
    if (entry.second.end > entry.second.begin)
      order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](const auto *a, const auto *b) {
    return a->second.begin < b->second.begin;
  });
  const std::string exactly =
      "; safetensors requires the tensors to cover the data exactly";
  uint64_t covered = 0; // the data region up to here belongs to tensors
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string &name = order[i]->first;
    const SafetensorsTensor &t = order[i]->second;
    if (i > 0 && t.begin < covered)
      return Status::error(p + ": tensor " + quote(name) +
                           " (data_offsets from " + std::to_string(t.begin) +
                           ") overlaps tensor " + quote(order[i - 1]->first) +
                           " (up to " + std::to_string(covered) + ")");
    if (t.begin > covered)
      return Status::error(p + ": bytes " + std::to_string(covered) + " to " +
                           std::to_string(t.begin) +
                           " of the data region belong to no tensor (tensor " +
                           quote(name) + " starts at " +
                           std::to_string(t.begin) + ")" + exactly);
    covered = t.end;
  }
  if (covered != dataSize_) {
    const std::string last =
        order.empty() ? std::string("no tensor")
                      : "the last tensor, " + quote(order.back()->first) +
                            ", ends at byte " + std::to_string(covered);
    return Status::error(p + ": " + std::to_string(dataSize_ - covered) +
                         " trailing bytes in the " + std::to_string(dataSize_) +
                         "-byte data region (" + last + ")" + exactly);
  }
  return Status::ok();
}

const SafetensorsTensor *SafetensorsFile::find(llvm::StringRef key) const {
  auto it = tensors_.find(key.str());
  return it == tensors_.end() ? nullptr : &it->second;
}

Status SafetensorsFile::read(uint64_t offset, uint64_t size,
                             const ByteSink &sink) const {
  if (offset > dataSize_ || size > dataSize_ - offset)
    return Status::error(path_ + ": read of " + std::to_string(size) +
                         " bytes at " + std::to_string(offset) +
                         " lies outside the data region");
  std::vector<char> buffer(std::min(size, kChunkBytes));
  while (size > 0) {
    uint64_t n = std::min(size, kChunkBytes);
    if (!preadAll(fd_, buffer.data(), n, dataStart_ + offset))
      return Status::error(path_ + ": read failed at byte " +
                           std::to_string(dataStart_ + offset) +
                           " (was the file truncated?)");
    sink(buffer.data(), n);
    offset += n;
    size -= n;
  }
  return Status::ok();
}

Status SafetensorsFile::readColumns(const SafetensorsTensor &t,
                                    int64_t colBegin, int64_t colEnd,
                                    const ByteSink &sink) const {
  uint64_t rows = static_cast<uint64_t>(t.shape[0]);
  uint64_t rowBytes = static_cast<uint64_t>(t.shape[1]) * t.elementSize;
  uint64_t skip = static_cast<uint64_t>(colBegin) * t.elementSize;
  uint64_t take = static_cast<uint64_t>(colEnd - colBegin) * t.elementSize;
  if (rows == 0 || take == 0)
    return Status::ok();
  // Whole rows are read a block at a time; each row's column range is then
  // handed on, so one pread serves many rows.
  uint64_t rowsPerChunk = std::max<uint64_t>(1, kChunkBytes / rowBytes);
  std::vector<char> buffer(std::min(rows, rowsPerChunk) * rowBytes);
  for (uint64_t row = 0; row < rows; row += rowsPerChunk) {
    uint64_t n = std::min(rowsPerChunk, rows - row);
    uint64_t at = dataStart_ + t.begin + row * rowBytes;
    if (!preadAll(fd_, buffer.data(), n * rowBytes, at))
      return Status::error(path_ + ": read failed at byte " +
                           std::to_string(at) + " (was the file truncated?)");
    for (uint64_t r = 0; r < n; ++r)
      sink(buffer.data() + r * rowBytes + skip, take);
  }
  return Status::ok();
}

Status HfTensorStore::open(const std::string &dir,
                           std::unique_ptr<HfTensorStore> &out) {
  namespace fs = std::filesystem;
  auto store = std::make_unique<HfTensorStore>();
  fs::path index = fs::path(dir) / "model.safetensors.index.json";
  fs::path single = fs::path(dir) / "model.safetensors";
  std::error_code ec;
  if (!fs::exists(index, ec)) {
    if (!fs::exists(single, ec))
      return Status::error(dir + ": no model.safetensors or "
                                 "model.safetensors.index.json (only "
                                 "safetensors weights are supported)");
    store->indexPath_ = single.string();
    std::unique_ptr<SafetensorsFile> file;
    if (Status s = SafetensorsFile::open(single.string(), file); !s)
      return s;
    for (const auto &[key, tensor] : file->tensors())
      store->keys_[key] = Entry{file.get(), &tensor};
    store->files_.push_back(std::move(file));
    out = std::move(store);
    return Status::ok();
  }

  std::string ip = index.string();
  store->indexPath_ = ip;
  auto buffer = llvm::MemoryBuffer::getFile(ip);
  if (!buffer)
    return Status::error(ip + ": cannot read: " + buffer.getError().message());
  llvm::json::Value json(nullptr);
  if (Status s = parseJson(ip, (*buffer)->getBuffer(), json); !s)
    return s;
  const llvm::json::Object *root = json.getAsObject();
  const llvm::json::Object *map =
      root ? root->getObject("weight_map") : nullptr;
  if (!map)
    return Status::error(ip + ": missing object 'weight_map'");
  std::map<std::string, SafetensorsFile *> shards;
  // Sorted keys make the first error reported independent of hash order.
  std::map<std::string, std::string> entries;
  for (const auto &[key, value] : *map) {
    std::optional<llvm::StringRef> name = value.getAsString();
    if (!name)
      return Status::error(ip + ": weight_map entry " + quote(key.str()) +
                           " is not a file name");
    entries[key.str()] = name->str();
  }
  for (const auto &[key, name] : entries) {
    // Shards live beside the index; a path elsewhere is refused.
    fs::path rel(name);
    if (rel.empty() || rel.is_absolute() || rel.has_parent_path())
      return Status::error(ip + ": weight_map entry " + quote(key) + " names " +
                           quote(name) +
                           ", which is not a file name in the model directory");
    auto it = shards.find(name);
    if (it == shards.end()) {
      fs::path shard = fs::path(dir) / rel;
      if (!fs::is_regular_file(shard, ec))
        return Status::error(ip + ": weight_map entry " + quote(key) +
                             " names shard " + quote(name) +
                             ", which does not exist in " + dir);
      std::unique_ptr<SafetensorsFile> file;
      if (Status s = SafetensorsFile::open(shard.string(), file); !s)
        return s;
      it = shards.emplace(name, file.get()).first;
      store->files_.push_back(std::move(file));
    }
    const SafetensorsTensor *tensor = it->second->find(key);
    if (!tensor)
      return Status::error(ip + ": weight_map maps " + quote(key) + " to " +
                           quote(name) + ", but " + it->second->path() +
                           " has no tensor " + quote(key));
    store->keys_[key] = Entry{it->second, tensor};
  }
  out = std::move(store);
  return Status::ok();
}

std::optional<HfTensorStore::Entry>
HfTensorStore::find(llvm::StringRef key) const {
  auto it = keys_.find(key);
  if (it == keys_.end())
    return std::nullopt;
  return it->second;
}

} // namespace ingot::compiler::hf
