//===- Artifact.h - Writing and loading model.ingot files -------*- C++ -*-===//
//
// File layout (all integers little-endian):
//   header        magic, format version, compiler version, section table
//   manifest      Manifest in protobuf wire format (docs/manifest.proto)
//   weights       4 KiB-aligned section; each tensor 64-B aligned within it
//   code.<target> one section per target holding generated code objects
// Every section, and the header itself, carries a checksum that the loader
// verifies before it touches the section's bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ingot {

constexpr uint32_t kArtifactFormatVersion = 1;

/// Receives the bytes of one tensor as the writer streams it.
using ByteSink = std::function<void(const void *data, size_t size)>;
/// Produces one tensor's bytes into the sink; returns an error on failure.
using TensorProducer = std::function<Status(const ByteSink &sink)>;

/// Builds an artifact file. Tensor offsets/sizes in the manifest are filled in
/// by the writer. Output is deterministic: same manifest and bytes give the
/// same file, whatever the path or time. Writes to a temp file beside the
/// destination and renames it into place only when everything succeeded.
class ArtifactWriter {
public:
  explicit ArtifactWriter(Manifest manifest);
  /// One producer per manifest tensor (same index). It must emit exactly
  /// TensorEntry::bytes computed from dtype and shape.
  void setTensorProducer(size_t tensorIndex, TensorProducer producer);
  /// Adds a code section for a target (may be empty for CPU for now).
  void addCodeSection(const std::string &target, std::vector<uint8_t> bytes);
  Status write(const std::string &path);

private:
  Manifest manifest_;
  std::vector<TensorProducer> producers_;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> code_;
  std::string setupError_; // a misuse caught early, reported by write()
};

/// A loaded artifact: the file is memory-mapped and fully validated (magic,
/// version, section bounds, checksums, manifest structure: every buffer,
/// tensor and step index in range, every tensor inside the weight section)
/// before open() returns.
class Artifact {
public:
  static Status open(const std::string &path, std::unique_ptr<Artifact> *out);
  ~Artifact();

  const Manifest &manifest() const { return manifest_; }
  const std::string &path() const { return path_; }
  uint64_t fileSize() const { return size_; }
  /// Pointer to a tensor's bytes inside the mapped weight section.
  const uint8_t *tensorData(size_t tensorIndex) const;
  struct SectionInfo {
    std::string name; // "manifest", "weights", "code.cpu", ...
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  const std::vector<SectionInfo> &sections() const { return sections_; }

private:
  Artifact() = default;
  Artifact(const Artifact &) = delete; // owns the mapping
  Artifact &operator=(const Artifact &) = delete;
  std::string path_;
  const uint8_t *base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t weightsOffset_ = 0;
  Manifest manifest_;
  std::vector<SectionInfo> sections_;
};

/// Encoding used inside the artifact (exposed for tests and tools).
std::vector<uint8_t> encodeManifest(const Manifest &m);
Status decodeManifest(const uint8_t *data, size_t size, Manifest *out);

} // namespace ingot
