//===- ExternalWeights.cpp - Weights an artifact keeps outside ------------===//
#include "ExternalWeights.h"

#include "ingot/ParamProducer.h"
#include "ingot/PosixRead.h"
#include "ingot/SourceSlice.h"
#include "ingot/ThreadPool.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace ingot {
namespace {

/// Headers over this size are damage (the safetensors package's own limit).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

/// Streaming reads go through a buffer of this size.
constexpr uint64_t kChunkBytes = 4u << 20;

/// One safetensors file, read with pread (its pages stay in the page cache
/// rather than in this process's resident set next to the weights made
/// from them), with the tensors the artifact reads found in its header and
/// checked.
class SourceFile {
public:
  ~SourceFile() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Status open(const std::string &path);
  /// Finds `want` in the header and checks it against what was compiled;
  /// `*begin` is the offset of its bytes in the file.
  Status check(const SourceTensor &want, StoredTensor *stored,
               uint64_t *begin) const;
  /// Streams `size` bytes at file offset `at` into the sink.
  Status read(uint64_t at, uint64_t size, const ByteSink &sink) const;

private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0, dataStart_ = 0;
  nlohmann::json header_;
};

Status SourceFile::open(const std::string &path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error(path + ": not a regular file");
  size_ = uint64_t(st.st_size);
  uint8_t prefix[8];
  uint64_t len = 0;
  if (size_ >= 8 && preadAll(fd_, prefix, 8, 0))
    for (int i = 7; i >= 0; --i)
      len = (len << 8) | prefix[i];
  if (size_ < 8 || len > size_ - 8 || len > kMaxHeaderBytes)
    return Status::error(path + ": not a safetensors file (its header "
                                "length runs past the end of the file)");
  dataStart_ = 8 + len;
  std::string text(len, '\0');
  if (!preadAll(fd_, text.data(), len, 8))
    return Status::error(path +
                         ": cannot read the header: " + std::strerror(errno));
  header_ = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (header_.is_discarded() || !header_.is_object())
    return Status::error(path + ": the header is not a JSON object");
  return Status::ok();
}

Status SourceFile::read(uint64_t at, uint64_t size,
                        const ByteSink &sink) const {
  std::vector<uint8_t> buffer(std::min(size, kChunkBytes));
  while (size > 0) {
    const uint64_t n = std::min(size, kChunkBytes);
    if (!preadAll(fd_, buffer.data(), n, at))
      return Status::error(path_ + ": read failed at byte " +
                           std::to_string(at) + " (was the file truncated?)");
    sink(buffer.data(), n);
    at += n;
    size -= n;
  }
  return Status::ok();
}

/// The entry's shape, if it is an array of non-negative integers.
bool readShape(const nlohmann::json &e, std::vector<int64_t> *shape) {
  const auto it = e.find("shape");
  if (it == e.end() || !it->is_array())
    return false;
  for (const nlohmann::json &d : *it) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return false;
    shape->push_back(d.get<int64_t>());
  }
  return true;
}

Status SourceFile::check(const SourceTensor &want, StoredTensor *stored,
                         uint64_t *at) const {
  const std::string where = path_ + ": tensor '" + want.name + "'";
  const auto it = header_.find(want.name);
  if (it == header_.end())
    return Status::error(path_ + ": no tensor '" + want.name + "', which " +
                         "the artifact was compiled to read (is --weights " +
                         "the directory it was compiled from?)");
  const nlohmann::json &e = *it;
  std::vector<int64_t> shape;
  const auto dtype = e.is_object() ? e.find("dtype") : e.end();
  const auto offsets = e.is_object() ? e.find("data_offsets") : e.end();
  if (!e.is_object() || dtype == e.end() || !dtype->is_string() ||
      !readShape(e, &shape) || offsets == e.end() || !offsets->is_array() ||
      offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return Status::error(where + ": malformed header entry (expected dtype, "
                                 "shape and data_offsets)");
  if (dtype->get<std::string>() != want.dtype || shape != want.shape)
    return Status::error(where + " is " + dtype->get<std::string>() + " " +
                         shapeText(shape) + ", but the artifact was " +
                         "compiled from " + want.dtype + " " +
                         shapeText(want.shape) +
                         ": these are not the weights it was compiled for");
  const uint64_t begin = (*offsets)[0].get<uint64_t>();
  const uint64_t end = (*offsets)[1].get<uint64_t>();
  uint64_t need = safetensorsDTypeSize(want.dtype);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(need, uint64_t(d), &need))
      need = UINT64_MAX;
  if (end < begin || end > size_ - dataStart_ || end - begin != need)
    return Status::error(where + ": data_offsets [" + std::to_string(begin) +
                         ", " + std::to_string(end) + "] do not hold its " +
                         std::to_string(need) + " bytes inside the file");
  *stored = StoredTensor{path_, want.dtype, std::nullopt,
                         safetensorsDTypeSize(want.dtype), shape};
  if (want.dtype == "F32")
    stored->dtype = DType::F32;
  else if (want.dtype == "F16")
    stored->dtype = DType::F16;
  else if (want.dtype == "BF16")
    stored->dtype = DType::BF16;
  *at = dataStart_ + begin;
  return Status::ok();
}

/// The checked source tensors, as a weight source for produceParam.
class CheckedSource : public WeightSource {
public:
  struct Tensor {
    StoredTensor stored;
    const SourceFile *file = nullptr;
    uint64_t at = 0; // its bytes' offset in the file
  };
  std::map<std::string, Tensor> tensors;

  Status produce(const std::string &name, const ByteSink &sink) override {
    SourcePart part;
    if (Status s = parseSourcePart(name, &part); !s)
      return s;
    const auto it = tensors.find(part.key);
    if (it == tensors.end()) // the manifest validator rules this out
      return Status::error("no source tensor '" + part.key + "'");
    const Tensor &t = it->second;
    return produceSourcePart(
        t.stored, part, name,
        [&](uint64_t offset, uint64_t size, const ByteSink &out) {
          return t.file->read(t.at + offset, size, out);
        },
        sink);
  }
};

/// One external tensor's bytes, made at its offset in `space`.
Status makeTensor(CheckedSource &source, const TensorEntry &t, uint8_t *space) {
  uint8_t *dst = space + t.offset;
  uint64_t written = 0;
  Status s = produceParam(source, paramSpecOf(t), [&](const void *p, size_t n) {
    if (written + n <= t.bytes)
      std::memcpy(dst + written, p, n);
    written += n;
  });
  if (!s)
    return s;
  if (written != t.bytes)
    return Status::error("weight '" + t.name + "' came to " +
                         std::to_string(written) + " bytes, expected " +
                         std::to_string(t.bytes));
  return Status::ok();
}

} // namespace

Status loadExternalWeights(const Manifest &m, const std::string &dir,
                           uint8_t *space) {
  const ExternalWeights &w = m.externalWeights;
  std::vector<std::unique_ptr<SourceFile>> files;
  for (const std::string &name : w.files) {
    files.push_back(std::make_unique<SourceFile>());
    if (Status s = files.back()->open(dir + "/" + name); !s)
      return s;
  }
  CheckedSource source;
  for (const SourceTensor &t : w.tensors) {
    CheckedSource::Tensor &checked = source.tensors[t.name];
    checked.file = files[t.file].get();
    if (Status s = files[t.file]->check(t, &checked.stored, &checked.at); !s)
      return s;
  }
  // Tensors are independent: made in parallel, the largest first, each
  // worker taking the next one; the first failure in table order is the
  // one reported, whatever the timing.
  std::vector<size_t> order;
  for (size_t i = 0; i < m.tensors.size(); ++i)
    if (m.tensors[i].external)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return m.tensors[a].bytes > m.tensors[b].bytes;
  });
  std::vector<Status> results(m.tensors.size(), Status::ok());
  std::atomic<size_t> next{0};
  ThreadPool pool(0);
  pool.parallelFor(int64_t(pool.size()), 1, [&](int64_t, int64_t) {
    for (size_t k; (k = next.fetch_add(1)) < order.size();)
      results[order[k]] = makeTensor(source, m.tensors[order[k]], space);
  });
  for (const Status &r : results)
    if (!r)
      return r;
  return Status::ok();
}

} // namespace ingot
