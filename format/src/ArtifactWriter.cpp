//===- ArtifactWriter.cpp - Streaming, atomic artifact writer -------------===//
//
// The layout (every offset, the manifest bytes) is computed before anything
// is written; then the file is streamed front to back into a temp file beside
// the destination (ingot/AtomicFile.h), the header with its checksums is
// patched in last, and the temp file is fsynced and renamed over the
// destination. Weights pass through
// one tensor at a time, never all in memory.
//
//===----------------------------------------------------------------------===//
#include "ingot/ArtifactFormat.h"
#include "ingot/AtomicFile.h"
#include "ingot/Checksum.h"

#include <cerrno>
#include <cstring>
#include <set>
#include <unistd.h>

namespace ingot {

namespace {

using namespace format;

std::string errnoText() { return std::strerror(errno); }

/// Buffered sequential writes to a file descriptor; remembers the first error.
class FileOut {
public:
  explicit FileOut(int fd) : fd_(fd) { buf_.reserve(kBufSize); }
  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  uint64_t position() const { return pos_; }

  void write(const void *data, size_t size) {
    pos_ += size;
    if (!ok())
      return;
    const uint8_t *p = static_cast<const uint8_t *>(data);
    if (buf_.size() + size > kBufSize)
      flush();
    if (size >= kBufSize)
      writeAll(p, size);
    else
      buf_.insert(buf_.end(), p, p + size);
  }
  void zeros(uint64_t n, Checksum64 *hash) {
    static const uint8_t kZero[4096] = {};
    while (n && ok()) {
      size_t k = n < sizeof kZero ? size_t(n) : sizeof kZero;
      write(kZero, k);
      if (hash)
        hash->update(kZero, k);
      n -= k;
    }
  }
  void flush() {
    if (ok() && !buf_.empty())
      writeAll(buf_.data(), buf_.size());
    buf_.clear();
  }
  void patch(uint64_t offset, const std::vector<uint8_t> &bytes) {
    flush();
    size_t done = 0;
    while (ok() && done < bytes.size()) {
      ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done,
                           off_t(offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        error_ = "write failed: " + errnoText();
      else
        done += size_t(n);
    }
  }

private:
  static constexpr size_t kBufSize = 1 << 20;
  void writeAll(const uint8_t *p, size_t size) {
    while (ok() && size) {
      ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        error_ = "write failed: " + errnoText();
        return;
      }
      p += n;
      size -= size_t(n);
    }
  }
  int fd_;
  uint64_t pos_ = 0;
  std::vector<uint8_t> buf_;
  std::string error_;
};

/// Streams every tensor into `out`, hashing the weight section as it goes.
Status streamWeights(const Manifest &m,
                     const std::vector<TensorProducer> &producers, FileOut &out,
                     uint64_t *checksum) {
  Checksum64 hash;
  uint64_t cursor = 0;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorEntry &t = m.tensors[i];
    if (t.external) // made at load from the external weights
      continue;
    out.zeros(t.offset - cursor, &hash);
    const TensorProducer *producer =
        i < producers.size() && producers[i] ? &producers[i] : nullptr;
    if (!producer && t.bytes)
      return Status::error("tensor '" + t.name + "' has no data producer");
    uint64_t emitted = 0;
    ByteSink sink = [&](const void *data, size_t size) {
      // Excess bytes are counted but never written: the layout is fixed.
      emitted += size;
      if (emitted <= t.bytes) {
        out.write(data, size);
        hash.update(data, size);
      }
    };
    if (producer)
      if (Status st = (*producer)(sink); !st)
        return Status::error("tensor '" + t.name + "': " + st.message());
    if (!out.ok())
      return Status::error(out.error());
    if (emitted != t.bytes)
      return Status::error("tensor '" + t.name + "': producer emitted " +
                           std::to_string(emitted) + " bytes, expected " +
                           std::to_string(t.bytes) + " (shape x dtype size)");
    cursor = t.offset + t.bytes;
  }
  *checksum = hash.finish();
  return Status::ok();
}

Status writeToFd(int fd, const Manifest &m,
                 const std::vector<TensorProducer> &producers,
                 const std::vector<uint8_t> &manifestBytes,
                 const CodeSections &code,
                 std::vector<SectionRecord> &sections) {
  FileOut out(fd);
  uint64_t header = headerSize(m.compilerVersion.size(), sections.size());
  // The header is written as zeros now and patched once checksums are known.
  out.zeros(header, nullptr);
  out.zeros(sections[0].offset - header, nullptr);
  out.write(manifestBytes.data(), manifestBytes.size());
  sections[0].checksum = checksum64(manifestBytes.data(), manifestBytes.size());
  out.zeros(sections[1].offset - out.position(), nullptr);
  if (Status st = streamWeights(m, producers, out, &sections[1].checksum); !st)
    return st;
  out.zeros(sections[1].offset + sections[1].size - out.position(), nullptr);
  for (size_t i = 0; i < code.size(); ++i) {
    SectionRecord &s = sections[2 + i];
    out.zeros(s.offset - out.position(), nullptr);
    out.write(code[i].second.data(), code[i].second.size());
    s.checksum = checksum64(code[i].second.data(), code[i].second.size());
  }
  out.patch(0, encodeHeader(m.compilerVersion, sections));
  if (!out.ok())
    return Status::error(out.error());
  return Status::ok();
}

} // namespace

Status format::writeArtifactFile(const std::string &path, Manifest m,
                                 const std::vector<TensorProducer> &producers,
                                 const CodeSections &code, bool validate) {
  auto fail = [&](const std::string &msg) {
    return Status::error(path + ": " + msg);
  };
  m.formatVersion = kArtifactFormatVersion;
  if (m.compilerVersion.size() > kMaxCompilerVersionSize)
    return fail("compiler version string is too long");
  uint64_t weightsSize = 0;
  if (Status st = layOutTensors(&m, &weightsSize); !st)
    return fail(st.message());
  m.memory.weightsBytes =
      m.externalWeights.empty() ? weightsSize : m.externalWeights.spaceBytes;

  std::vector<SectionRecord> sections(2);
  sections[0].name = kManifestSection;
  sections[1].name = kWeightsSection;
  std::vector<std::pair<std::string, uint64_t>> codeSizes;
  for (const auto &[target, bytes] : code) {
    SectionRecord s;
    s.name = kCodePrefix + target;
    if (Status st = checkSectionName(s.name); !st)
      return fail("code section for target '" + target + "': " + st.message());
    codeSizes.emplace_back(target, bytes.size());
    for (const SectionRecord &other : sections)
      if (other.name == s.name)
        return fail("two code sections for target '" + target + "'");
    s.size = bytes.size();
    sections.push_back(std::move(s));
  }
  if (sections.size() > kMaxSections)
    return fail("too many code sections");
  if (Status st = validateCodeSections(m, codeSizes); !st)
    return fail(st.message());
  if (validate)
    if (Status st = validateManifest(m, weightsSize); !st)
      return fail("invalid manifest: " + st.message());

  std::vector<uint8_t> manifestBytes = encodeManifest(m);
  sections[0].size = manifestBytes.size();
  sections[1].size = weightsSize;
  uint64_t end = headerSize(m.compilerVersion.size(), sections.size());
  for (SectionRecord &s : sections) {
    s.offset = alignUp(end, &s == &sections[1] ? kWeightsAlign : kSectionAlign);
    end = s.offset + s.size;
  }

  std::string temp;
  int fd = -1;
  if (Status st = createTempFile(path, &fd, &temp); !st)
    return st;
  Status st = writeToFd(fd, m, producers, manifestBytes, code, sections);
  if (!st) {
    discardTempFile(fd, temp);
    return fail(st.message());
  }
  // commitTempFile fsyncs, renames and names the path in its errors.
  return commitTempFile(fd, temp, path);
}

ArtifactWriter::ArtifactWriter(Manifest manifest)
    : manifest_(std::move(manifest)), producers_(manifest_.tensors.size()) {}

void ArtifactWriter::setTensorProducer(size_t tensorIndex,
                                       TensorProducer producer) {
  // Reported by write(), which is where errors surface.
  if (tensorIndex >= producers_.size())
    setupError_ = "a data producer was set for tensor " +
                  std::to_string(tensorIndex) + ", but the manifest has " +
                  std::to_string(producers_.size()) + " tensors";
  else
    producers_[tensorIndex] = std::move(producer);
}

void ArtifactWriter::addCodeSection(const std::string &target,
                                    std::vector<uint8_t> bytes) {
  code_.emplace_back(target, std::move(bytes));
}

Status ArtifactWriter::write(const std::string &path) {
  if (!setupError_.empty())
    return Status::error(path + ": " + setupError_);
  return format::writeArtifactFile(path, manifest_, producers_, code_,
                                   /*validate=*/true);
}

} // namespace ingot
