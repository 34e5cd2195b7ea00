//===- GgufFile.cpp - A validated GGUF file -------------------------------===//
#include "compiler/gguf/GgufFile.h"
#include "ingot/PosixRead.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ingot::compiler::gguf {
namespace {

/// ggml's GGML_MAX_DIMS: no tensor has more.
constexpr uint32_t kMaxRank = 4;
/// Arrays of arrays exist in the format but not in any model; a cap keeps a
/// hostile file from recursing the parser off the stack.
constexpr int kMaxArrayDepth = 8;
constexpr uint64_t kChunkBytes = 4u << 20;

/// Sequential, bounds-checked reads of the part ahead of the data region,
/// through a buffer. Every length is checked against the bytes left before
/// anything is allocated for it.
class Cursor {
public:
  Cursor(int fd, uint64_t fileSize, const std::string &path)
      : fd_(fd), size_(fileSize), path_(path) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  Status bytes(void *dst, uint64_t n, const std::string &what) {
    if (n > left())
      return Status::error(path_ + ": truncated at byte " +
                           std::to_string(pos_) + " reading " + what +
                           " (needs " + std::to_string(n) + " bytes, " +
                           std::to_string(left()) + " left)");
    auto *out = static_cast<char *>(dst);
    while (n > 0) {
      if (bufPos_ == buf_.size() && !refill())
        return Status::error(path_ + ": read error at byte " +
                             std::to_string(pos_));
      uint64_t take = std::min<uint64_t>(n, buf_.size() - bufPos_);
      std::memcpy(out, buf_.data() + bufPos_, take);
      out += take, n -= take, bufPos_ += take, pos_ += take;
    }
    return Status::ok();
  }
  template <typename T> Status scalar(T &v, const std::string &what) {
    return bytes(&v, sizeof(T), what); // little-endian hosts only (x86-64)
  }
  Status string(std::string &s, const std::string &what) {
    uint64_t n = 0;
    if (Status st = scalar(n, what); !st)
      return st;
    if (n > left())
      return Status::error(path_ + ": " + what + " at byte " +
                           std::to_string(pos_ - 8) + " claims " +
                           std::to_string(n) + " bytes, but only " +
                           std::to_string(left()) + " are left");
    s.resize(n);
    return bytes(s.data(), n, what);
  }

private:
  bool refill() {
    buf_.resize(std::min<uint64_t>(kChunkBytes, left()));
    bufPos_ = 0;
    return !buf_.empty() && preadAll(fd_, buf_.data(), buf_.size(), pos_);
  }

  int fd_;
  uint64_t size_;
  const std::string &path_;
  uint64_t pos_ = 0;
  std::vector<char> buf_;
  size_t bufPos_ = 0;
};

Status readValue(Cursor &c, GgufValueType type, GgufValue &v, int depth,
                 const std::string &key, const std::string &path);

Status readArray(Cursor &c, GgufValue &v, int depth, const std::string &key,
                 const std::string &path) {
  uint32_t elem = 0;
  uint64_t count = 0;
  if (Status s = c.scalar(elem, "an array type"); !s)
    return s;
  if (Status s = c.scalar(count, "an array length"); !s)
    return s;
  if (elem > uint32_t(GgufValueType::F64))
    return Status::error(path + ": metadata '" + key +
                         "': unknown array element type " +
                         std::to_string(elem));
  if (depth >= kMaxArrayDepth)
    return Status::error(path + ": metadata '" + key + "': arrays nested " +
                         "deeper than " + std::to_string(kMaxArrayDepth));
  // Every element takes at least one byte: a longer count is damage.
  if (count > c.left())
    return Status::error(path + ": metadata '" + key + "': array of " +
                         std::to_string(count) + " elements in " +
                         std::to_string(c.left()) + " remaining bytes");
  v.elemType = GgufValueType(elem);
  v.array.resize(count);
  for (GgufValue &e : v.array)
    if (Status s = readValue(c, v.elemType, e, depth + 1, key, path); !s)
      return s;
  return Status::ok();
}

Status readValue(Cursor &c, GgufValueType type, GgufValue &v, int depth,
                 const std::string &key, const std::string &path) {
  v.type = type;
  auto num = [&](auto t, auto &dst) -> Status {
    if (Status s = c.scalar(t, "a metadata value"); !s)
      return s;
    dst = t;
    return Status::ok();
  };
  switch (type) {
  case GgufValueType::U8: return num(uint8_t(), v.u);
  case GgufValueType::U16: return num(uint16_t(), v.u);
  case GgufValueType::U32: return num(uint32_t(), v.u);
  case GgufValueType::U64: return num(uint64_t(), v.u);
  case GgufValueType::I8: return num(int8_t(), v.i);
  case GgufValueType::I16: return num(int16_t(), v.i);
  case GgufValueType::I32: return num(int32_t(), v.i);
  case GgufValueType::I64: return num(int64_t(), v.i);
  case GgufValueType::F32: return num(float(), v.f);
  case GgufValueType::F64: return num(double(), v.f);
  case GgufValueType::Bool: {
    uint8_t b = 0;
    if (Status s = c.scalar(b, "a bool"); !s)
      return s;
    if (b > 1)
      return Status::error(path + ": metadata '" + key + "': bool byte " +
                           std::to_string(b) + " is neither 0 nor 1");
    v.u = b;
    return Status::ok();
  }
  case GgufValueType::String:
    return c.string(v.s, "a string value");
  case GgufValueType::Array:
    return readArray(c, v, depth, key, path);
  }
  return Status::error(path + ": metadata '" + key + "': unknown value type " +
                       std::to_string(uint32_t(type)));
}

} // namespace

bool GgufValue::isUnsigned() const {
  return type == GgufValueType::U8 || type == GgufValueType::U16 ||
         type == GgufValueType::U32 || type == GgufValueType::U64;
}
bool GgufValue::isSigned() const {
  return type == GgufValueType::I8 || type == GgufValueType::I16 ||
         type == GgufValueType::I32 || type == GgufValueType::I64;
}

std::string ggufTypeName(const GgufValue &v) {
  static const char *const names[] = {"u8",  "i8",     "u16",   "i16", "u32",
                                      "i32", "f32",    "bool",  "string",
                                      "array", "u64",  "i64",   "f64"};
  auto name = [&](GgufValueType t) {
    return uint32_t(t) <= 12 ? std::string(names[uint32_t(t)]) : "unknown";
  };
  if (v.type == GgufValueType::Array)
    return "array of " + name(v.elemType);
  return name(v.type);
}

int64_t GgufTensorInfo::rows() const {
  int64_t r = 1;
  for (size_t d = 1; d < dims.size(); ++d)
    r *= dims[d];
  return r;
}

GgufFile::~GgufFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status GgufFile::open(const std::string &path, std::unique_ptr<GgufFile> &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<GgufFile> file(new GgufFile(path, fd));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error(path + ": not a regular file");
  if (Status s = file->parse(uint64_t(st.st_size)); !s)
    return s;
  out = std::move(file);
  return Status::ok();
}

Status GgufFile::parse(uint64_t fileSize) {
  Cursor c(fd_, fileSize, path_);
  char magic[4];
  if (Status s = c.bytes(magic, 4, "the magic"); !s)
    return s;
  if (std::memcmp(magic, "GGUF", 4) != 0)
    return Status::error(path_ + ": not a GGUF file (no 'GGUF' magic)");
  uint64_t tensorCount = 0, kvCount = 0;
  if (Status s = c.scalar(version_, "the version"); !s)
    return s;
  if (version_ != 2 && version_ != 3)
    return Status::error(
        path_ + ": GGUF version " + std::to_string(version_) +
        " is not supported — supported: 2, 3 (a big-endian file reads as a "
        "huge version; convert it to little-endian)");
  if (Status s = c.scalar(tensorCount, "the tensor count"); !s)
    return s;
  if (Status s = c.scalar(kvCount, "the metadata count"); !s)
    return s;
  if (kvCount > c.left() / 13 || tensorCount > c.left() / 24)
    return Status::error(path_ + ": counts of " + std::to_string(kvCount) +
                         " metadata entries and " +
                         std::to_string(tensorCount) +
                         " tensors cannot fit in the file");
  for (uint64_t i = 0; i < kvCount; ++i) {
    std::string key;
    uint32_t type = 0;
    if (Status s = c.string(key, "a metadata key"); !s)
      return s;
    if (Status s = c.scalar(type, "a metadata type"); !s)
      return s;
    if (kv_.count(key))
      return error(key, "appears twice");
    GgufValue v;
    if (Status s = readValue(c, GgufValueType(type), v, 0, key, path_); !s)
      return s;
    kv_.emplace(std::move(key), std::move(v));
  }
  tensors_.resize(tensorCount);
  for (GgufTensorInfo &t : tensors_) {
    uint32_t rank = 0, type = 0;
    if (Status s = c.string(t.name, "a tensor name"); !s)
      return s;
    const std::string of = " of tensor '" + t.name + "'";
    if (Status s = c.scalar(rank, "the rank" + of); !s)
      return s;
    if (rank < 1 || rank > kMaxRank)
      return Status::error(path_ + ": tensor '" + t.name + "' has rank " +
                           std::to_string(rank) + "; expected 1 to 4");
    t.dims.resize(rank);
    for (int64_t &d : t.dims) {
      uint64_t v = 0;
      if (Status s = c.scalar(v, "a dim" + of); !s)
        return s;
      if (v < 1 || v > (uint64_t(1) << 40))
        return Status::error(path_ + ": tensor '" + t.name + "' has dim " +
                             std::to_string(v) + "; expected 1 to 2^40");
      d = int64_t(v);
    }
    if (Status s = c.scalar(type, "the type" + of); !s)
      return s;
    std::optional<GgmlTypeTraits> traits = ggmlTypeTraits(type);
    if (!traits)
      return Status::error(path_ + ": tensor '" + t.name + "' has " +
                           ggmlTypeName(type) +
                           ", which ingot does not read — supported: " +
                           supportedGgmlTypes());
    t.type = *traits;
    if (Status s = c.scalar(t.offset, "the offset" + of); !s)
      return s;
    if (tensorIndex_.count(t.name))
      return Status::error(path_ + ": tensor '" + t.name + "' appears twice");
    tensorIndex_[t.name] = size_t(&t - tensors_.data());
  }
  uint64_t alignment = 32;
  if (Status s = getUint("general.alignment", 32, alignment); !s)
    return s;
  if (alignment == 0 || (alignment & (alignment - 1)) || alignment > 65536)
    return error("general.alignment", "is " + std::to_string(alignment) +
                                          "; expected a power of two");
  uint64_t dataStart = (c.pos() + alignment - 1) / alignment * alignment;
  for (GgufTensorInfo &t : tensors_)
    if (t.offset % alignment)
      return Status::error(path_ + ": tensor '" + t.name + "' at offset " +
                           std::to_string(t.offset) + " is not aligned to " +
                           std::to_string(alignment));
  return placeTensors(dataStart, fileSize);
}

/// Sizes every tensor and checks that it lies inside the file without
/// overlapping another.
Status GgufFile::placeTensors(uint64_t dataStart, uint64_t fileSize) {
  std::vector<const GgufTensorInfo *> order;
  for (GgufTensorInfo &t : tensors_) {
    int64_t rowBytes = ggmlRowBytes(t.type, t.dims[0]);
    if (rowBytes < 0)
      return Status::error(path_ + ": tensor '" + t.name + "' of type " +
                           t.type.name + " has " + std::to_string(t.dims[0]) +
                           " values per row, not a multiple of its block of " +
                           std::to_string(t.type.blockValues));
    unsigned __int128 bytes = (unsigned __int128)rowBytes;
    for (size_t d = 1; d < t.dims.size(); ++d)
      bytes *= uint64_t(t.dims[d]);
    unsigned __int128 end = bytes + dataStart + t.offset;
    if (end > fileSize)
      return Status::error(path_ + ": tensor '" + t.name + "' (" +
                           t.type.name + ", " +
                           std::to_string(uint64_t(bytes)) +
                           " bytes) ends past the end of the file");
    t.bytes = uint64_t(bytes);
    t.offset += dataStart;
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(),
            [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->offset + order[i - 1]->bytes > order[i]->offset)
      return Status::error(path_ + ": tensors '" + order[i - 1]->name +
                           "' and '" + order[i]->name + "' overlap");
  return Status::ok();
}

const GgufValue *GgufFile::find(const std::string &key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensorInfo *GgufFile::tensor(const std::string &name) const {
  auto it = tensorIndex_.find(name);
  return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

Status GgufFile::error(const std::string &key, const std::string &what) const {
  return Status::error(path_ + ": metadata '" + key + "' " + what);
}

Status GgufFile::read(uint64_t offset, uint64_t size,
                      const ByteSink &sink) const {
  std::vector<char> buf(std::min(size, kChunkBytes));
  while (size > 0) {
    uint64_t n = std::min<uint64_t>(size, buf.size());
    if (!preadAll(fd_, buf.data(), n, offset))
      return Status::error(path_ + ": read error at byte " +
                           std::to_string(offset));
    sink(buf.data(), n);
    offset += n, size -= n;
  }
  return Status::ok();
}

} // namespace ingot::compiler::gguf
