//===- ArtifactWriter.h - Writing model.ingot files -------------*- C++ -*-===//
//
// File layout (all integers little-endian):
//   header        magic, format version, compiler version, section table
//   manifest      Manifest as a FlatBuffer (format/schema/manifest.fbs)
//   weights       4 KiB-aligned section; each tensor 64-B aligned within it
//   code.<target> one section per target holding generated code objects
// Every section, and the header itself, carries a checksum that the loader
// (the runtime's ingot/Artifact.h) verifies before it touches the section.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ingot {

/// 2: FlatBuffers manifest, XXH3-64 section checksums (1: protobuf wire
/// format and a home-made hash).
constexpr uint32_t kArtifactFormatVersion = kManifestFormatVersion;

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

/// Encoding used inside the artifact (exposed for tests and tools): the
/// same Manifest always gives the same bytes. decodeManifest verifies the
/// bytes before it reads them and refuses anything that is not a manifest
/// encodeManifest could have written (format/src/ManifestDecode.cpp).
std::vector<uint8_t> encodeManifest(const Manifest &m);
Status decodeManifest(const uint8_t *data, size_t size, Manifest *out);

} // namespace ingot
