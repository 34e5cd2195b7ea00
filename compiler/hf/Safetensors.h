//===- Safetensors.h - Validated safetensors files and shards ---*- C++ -*-===//
//
// Private to the Hugging Face importer. A safetensors file is an 8-byte
// little-endian header length, a JSON header mapping each tensor name to
// {dtype, shape, data_offsets} (plus optional "__metadata__"), then the data
// region. Headers are parsed and validated once, up front, so every later
// read can trust the offsets; tensor bytes are streamed in bounded chunks
// with pread and never held whole.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ArtifactWriter.h"
#include "ingot/DType.h"
#include "ingot/Status.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ingot::compiler::hf {

/// One entry of a safetensors header.
struct SafetensorsTensor {
  std::string dtypeName;      // as written: "F32", "BF16", "I64", ...
  std::optional<DType> dtype; // F32/F16/BF16 only: the weight dtypes
  size_t elementSize = 0;     // bytes per element of dtypeName
  std::vector<int64_t> shape;
  uint64_t begin = 0; // offsets into the data region
  uint64_t end = 0;
};

/// One opened, validated safetensors file. Keeps its descriptor open for
/// streaming reads.
class SafetensorsFile {
public:
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;

  /// Opens `path` and validates its header: a sane length that fits the
  /// file, valid JSON, known dtypes, non-negative shapes, offsets inside the
  /// data region whose size matches shape × dtype, and tensors that cover
  /// the data region exactly (no overlaps, gaps or trailing bytes).
  static Status open(const std::string &path,
                     std::unique_ptr<SafetensorsFile> &out);

  const std::string &path() const { return path_; }
  const SafetensorsTensor *find(llvm::StringRef key) const;
  const std::map<std::string, SafetensorsTensor> &tensors() const {
    return tensors_;
  }

  /// Streams `size` bytes at `offset` of the data region into `sink`.
  Status read(uint64_t offset, uint64_t size, const ByteSink &sink) const;

private:
  SafetensorsFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status parseHeader(uint64_t fileSize);
  /// Checks the 8-byte length prefix against the file and reads the JSON
  /// header into `text`; sets the data region.
  Status readHeaderText(uint64_t fileSize, std::string &text);
  /// The tensors cover the data region exactly: no overlaps, no gaps, no
  /// trailing bytes.
  Status checkCoverage() const;

  std::string path_;
  int fd_ = -1;
  uint64_t dataStart_ = 0;
  uint64_t dataSize_ = 0;
  std::map<std::string, SafetensorsTensor> tensors_;
};

/// What an architecture builder needs of the weights: each tensor's dtype
/// and shape by its Hugging Face name. A safetensors directory is one; a
/// GGUF file, which names its tensors otherwise, presents itself as one.
class TensorCatalog {
public:
  virtual ~TensorCatalog() = default;
  /// The tensor named `key` and the file that holds it; null if absent.
  virtual const SafetensorsTensor *lookup(llvm::StringRef key,
                                          std::string *file) const = 0;
  /// The file that lists the tensors, for messages about missing ones.
  virtual const std::string &indexPath() const = 0;
  /// Every name lookup() knows, sorted: what a graph that uses all the
  /// weights would read.
  virtual std::vector<std::string> names() const = 0;
  /// `key` as the file names it, for messages (a GGUF file's own name).
  virtual std::string storedName(llvm::StringRef key) const {
    return key.str();
  }
};

/// The tensors of a model directory: model.safetensors, or the shards that
/// model.safetensors.index.json names.
class HfTensorStore : public TensorCatalog {
public:
  struct Entry {
    const SafetensorsFile *file = nullptr;
    const SafetensorsTensor *tensor = nullptr;
  };

  /// Opens DIR/model.safetensors.index.json if present (every referenced
  /// shard must exist and contain its keys), else DIR/model.safetensors.
  static Status open(const std::string &dir,
                     std::unique_ptr<HfTensorStore> &out);

  std::optional<Entry> find(llvm::StringRef key) const;
  /// Every tensor name, sorted.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto &[k, e] : keys_)
      out.push_back(k);
    return out;
  }
  const SafetensorsTensor *lookup(llvm::StringRef key,
                                  std::string *file) const override {
    std::optional<Entry> e = find(key);
    if (e && file)
      *file = e->file->path();
    return e ? e->tensor : nullptr;
  }
  const std::string &indexPath() const override { return indexPath_; }
  std::vector<std::string> names() const override { return keys(); }

private:
  std::string indexPath_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Entry, std::less<>> keys_;
};

/// Bytes per element of a safetensors dtype name; 0 when unknown.
size_t safetensorsElementSize(llvm::StringRef dtype);

/// "[2, 3]" for messages.
std::string shapeString(llvm::ArrayRef<int64_t> shape);
/// `s` in single quotes, for messages.
std::string quote(llvm::StringRef s);

} // namespace ingot::compiler::hf
