//===- Artifact.h - Loading model.ingot files --------------------*- C++
//-*-===//
//
// The file layout and its writer are the format library's
// (ingot/ArtifactWriter.h); this is the runtime's side: map the file and
// check every byte the runtime will touch before open() returns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ArtifactWriter.h" // the format the loader reads
#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ingot {

/// How open() treats weights an artifact keeps outside itself (compiled
/// with --weights=external).
struct LoadOptions {
  /// The directory of the safetensors files the artifact names; required
  /// for such an artifact, refused for one that holds its weights.
  std::string weightsDir;
  /// Read the manifest only and leave external weights unmade (tensorData
  /// is then nullptr for them): for tools that run no step.
  bool skipExternalWeights = false;
};

/// A loaded artifact: the file is memory-mapped and fully validated (magic,
/// version, section bounds, checksums, manifest structure: every buffer,
/// tensor and step index in range, every tensor inside the weight section)
/// before open() returns.
class Artifact {
public:
  static Status open(const std::string &path, std::unique_ptr<Artifact> *out,
                     const LoadOptions &options = {});
  ~Artifact();

  const Manifest &manifest() const { return manifest_; }
  const std::string &path() const { return path_; }
  uint64_t fileSize() const { return size_; }
  /// Pointer to a tensor's bytes: inside the mapped weight section, or for
  /// a tensor made from external weights, in the memory they were made in
  /// (nullptr when open() was told to skip them).
  const uint8_t *tensorData(size_t tensorIndex) const;
  /// Where external weights came from; empty when the file holds them all.
  const std::string &weightsDir() const { return weightsDir_; }
  struct SectionInfo {
    std::string name; // "manifest", "weights", "code.cpu", ...
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  const std::vector<SectionInfo> &sections() const { return sections_; }
  /// A GPU code object's bytes inside its mapped code section (in range:
  /// open() checked it); nullptr when `target` has no code section here.
  const uint8_t *codeObjectData(const GpuTarget &target,
                                const CodeObject &object) const;

private:
  Artifact() = default;
  Artifact(const Artifact &) = delete; // owns the mapping
  Artifact &operator=(const Artifact &) = delete;
  std::string path_;
  const uint8_t *base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t weightsOffset_ = 0;
  /// Anonymous memory holding the weight space of external weights.
  uint8_t *space_ = nullptr;
  uint64_t spaceSize_ = 0;
  std::string weightsDir_;
  Manifest manifest_;
  std::vector<SectionInfo> sections_;
};

} // namespace ingot
