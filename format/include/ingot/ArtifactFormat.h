//===- ArtifactFormat.h - Byte layout of model.ingot (private) --*- C++ -*-===//
//
// The on-disk header and section table (docs/artifact-format.md), and the
// checks shared by the writer and the loader, so that the writer can never
// produce a file the loader would refuse.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ArtifactWriter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::format {

/// 0x89 keeps text tools away; "\r\n" reveals newline-mangling transfers.
constexpr uint8_t kMagic[8] = {0x89, 'I', 'N', 'G', 'O', 'T', '\r', '\n'};
constexpr uint64_t kFixedHeaderSize = 24; // magic, version, sizes, counts
constexpr uint64_t kSectionEntrySize = 64;
constexpr uint64_t kSectionNameSize = 40; // NUL-terminated, NUL-padded
constexpr uint32_t kMaxSections = 256;
constexpr uint32_t kMaxCompilerVersionSize = 1024;
constexpr uint64_t kSectionAlign = 64;
constexpr uint64_t kWeightsAlign = 4096;
constexpr uint64_t kTensorAlign = 64;

constexpr const char *kManifestSection = "manifest";
constexpr const char *kWeightsSection = "weights";
constexpr const char *kCodePrefix = "code.";

/// (target, bytes) of each code section, in the order they were added.
using CodeSections = std::vector<std::pair<std::string, std::vector<uint8_t>>>;

struct SectionRecord {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
};

inline uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/// Bytes of the header, section table and header checksum.
uint64_t headerSize(size_t compilerVersionSize, size_t sectionCount);

/// Serialises the header; `sections` must already hold offsets and checksums.
std::vector<uint8_t> encodeHeader(const std::string &compilerVersion,
                                  const std::vector<SectionRecord> &sections);

/// Parses and checks the header of a file of `fileSize` bytes mapped at
/// `data`: magic, version, header checksum, section names, alignment,
/// bounds, order, zero padding between sections, and that the sections end
/// exactly at the end of the file. Does not verify section checksums.
Status parseHeader(const uint8_t *data, uint64_t fileSize,
                   std::string *compilerVersion,
                   std::vector<SectionRecord> *sections);

/// Checks a section name as stored in the table (also used for code.<target>).
Status checkSectionName(const std::string &name);

/// Fills TensorEntry::offset/bytes (64-B aligned, packed in order) and returns
/// the weight section's size. Fails on bad dtypes, negative dims, overflow.
Status layOutTensors(Manifest *m, uint64_t *weightsSize);

/// Structural checks on a manifest whose weight section is `weightsSize`
/// bytes: ids, indices and offsets in range, sizes consistent, no overflow.
Status validateManifest(const Manifest &m, uint64_t weightsSize);

/// The code sections (name without "code.", size) against the manifest:
/// one section per GPU target and each of its code objects inside it, and
/// no section for a target the manifest neither lists nor describes.
Status validateCodeSections(
    const Manifest &m,
    const std::vector<std::pair<std::string, uint64_t>> &sections);

/// Writes an artifact. ArtifactWriter::write calls this with validate=true;
/// tests pass false to produce files the loader must refuse.
Status writeArtifactFile(const std::string &path, Manifest manifest,
                         const std::vector<TensorProducer> &producers,
                         const CodeSections &code, bool validate);

} // namespace ingot::format
