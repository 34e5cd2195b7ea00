//===- GgufFile.h - A validated GGUF file -----------------------*- C++ -*-===//
//
// Private to the GGUF importer. A GGUF file (versions 2 and 3, little-
// endian) is: "GGUF", a uint32 version, uint64 tensor and metadata counts,
// the metadata (key string, uint32 value type, value), the tensor infos
// (name, uint32 rank, uint64 dims innermost first, uint32 ggml type, uint64
// offset into the data region), then the data region, which starts at the
// next multiple of `general.alignment` (32 when absent). Everything ahead of
// the data is parsed and checked when the file is opened — lengths against
// the bytes left, ranks, dims, types, alignment, tensors inside the file and
// not overlapping — so later reads can trust every offset. Tensor bytes are
// streamed with pread and never held whole.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/gguf/GgmlType.h"
#include "ingot/ArtifactWriter.h"
#include "ingot/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ingot::compiler::gguf {

/// GGUF metadata value types (gguf_type).
enum class GgufValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};

/// One metadata value. Scalars keep the widest form of their kind; an
/// array keeps its element type and elements.
struct GgufValue {
  GgufValueType type = GgufValueType::U8;
  uint64_t u = 0; // unsigned integers and bools
  int64_t i = 0;  // signed integers
  double f = 0;   // floats
  std::string s;
  GgufValueType elemType = GgufValueType::U8;
  std::vector<GgufValue> array;

  bool isUnsigned() const;
  bool isSigned() const;
  bool isFloat() const { return type == GgufValueType::F32 ||
                                type == GgufValueType::F64; }
};

/// "u32", "string", "array of string", ... for messages.
std::string ggufTypeName(const GgufValue &v);

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> dims; // GGUF order: dims[0] is the innermost
  GgmlTypeTraits type;
  uint64_t offset = 0; // absolute file offset
  uint64_t bytes = 0;
  /// Rows of dims[0] values (the product of the other dims).
  int64_t rows() const;
};

class GgufFile {
public:
  ~GgufFile();
  GgufFile(const GgufFile &) = delete;
  GgufFile &operator=(const GgufFile &) = delete;

  static Status open(const std::string &path, std::unique_ptr<GgufFile> &out);

  const std::string &path() const { return path_; }
  uint32_t version() const { return version_; }
  const std::map<std::string, GgufValue> &metadata() const { return kv_; }
  const GgufValue *find(const std::string &key) const;
  const std::vector<GgufTensorInfo> &tensors() const { return tensors_; }
  const GgufTensorInfo *tensor(const std::string &name) const;

  // Typed reads; an error names the file and the key and says what was
  // expected. Getters with a default accept an absent key.
  Status getUint(const std::string &key, uint64_t &out) const;
  Status getUint(const std::string &key, uint64_t dflt, uint64_t &out) const;
  Status getFloat(const std::string &key, double &out) const;
  Status getFloat(const std::string &key, double dflt, double &out) const;
  Status getBool(const std::string &key, bool dflt, bool &out) const;
  Status getString(const std::string &key, std::string &out) const;
  Status getString(const std::string &key, const std::string &dflt,
                   std::string &out) const;
  /// An array whose elements are all of `elemType`; absent = error.
  Status getArray(const std::string &key, GgufValueType elemType,
                  const std::vector<GgufValue> *&out) const;
  /// "<file>: metadata '<key>': <what>".
  Status error(const std::string &key, const std::string &what) const;

  /// Streams `size` bytes at absolute `offset` into `sink` in bounded
  /// chunks.
  Status read(uint64_t offset, uint64_t size, const ByteSink &sink) const;

private:
  GgufFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status parse(uint64_t fileSize);
  Status placeTensors(uint64_t dataStart, uint64_t fileSize);

  std::string path_;
  int fd_ = -1;
  uint32_t version_ = 0;
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensorIndex_;
};

} // namespace ingot::compiler::gguf
