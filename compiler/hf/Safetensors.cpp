//===- Safetensors.cpp - Validated safetensors files and shards -----------===//
#include "compiler/hf/Safetensors.h"
#include "compiler/JsonLimits.h"
#include "ingot/PosixRead.h"
#include "ingot/SourceSlice.h"

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

/// Streaming reads go through a buffer of this size.
constexpr uint64_t kChunkBytes = 4u << 20;

} // namespace

std::string quote(llvm::StringRef s) {
  // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) about
  // "'" + std::string once this is inlined.
  std::string out = "'";
  out += s;
  out += '\'';
  return out;
}

size_t safetensorsElementSize(llvm::StringRef dtype) {
  return safetensorsDTypeSize(dtype.str());
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
