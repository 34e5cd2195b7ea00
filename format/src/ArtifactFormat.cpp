//===- ArtifactFormat.cpp - Header and section table codec ----------------===//
//
// Encodes the header of model.ingot and parses it back with every check the
// loader needs before it trusts an offset. The manifest's own checks are in
// ManifestValidate.cpp.
//
//===----------------------------------------------------------------------===//
#include "ingot/ArtifactFormat.h"

#include "ArtifactFormatUtil.h"
#include "ingot/Checksum.h"

#include <cstring>
#include <set>

namespace ingot::format {
namespace {

void putU32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
void putU64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
uint32_t getU32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t getU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

} // namespace

uint64_t headerSize(size_t compilerVersionSize, size_t sectionCount) {
  return kFixedHeaderSize + alignUp(compilerVersionSize, 8) +
         kSectionEntrySize * sectionCount + 8;
}

std::vector<uint8_t> encodeHeader(const std::string &compilerVersion,
                                  const std::vector<SectionRecord> &sections) {
  uint64_t size = headerSize(compilerVersion.size(), sections.size());
  std::vector<uint8_t> h(size, 0);
  std::memcpy(h.data(), kMagic, 8);
  putU32(&h[8], kArtifactFormatVersion);
  putU32(&h[12], uint32_t(size));
  putU32(&h[16], uint32_t(sections.size()));
  putU32(&h[20], uint32_t(compilerVersion.size()));
  std::memcpy(&h[kFixedHeaderSize], compilerVersion.data(),
              compilerVersion.size());
  uint8_t *e = &h[kFixedHeaderSize + alignUp(compilerVersion.size(), 8)];
  for (const SectionRecord &s : sections) {
    std::memcpy(e, s.name.data(), s.name.size());
    putU64(e + kSectionNameSize, s.offset);
    putU64(e + kSectionNameSize + 8, s.size);
    putU64(e + kSectionNameSize + 16, s.checksum);
    e += kSectionEntrySize;
  }
  putU64(&h[size - 8], checksum64(h.data(), size - 8));
  return h;
}

Status checkSectionName(const std::string &name) {
  if (name.empty() || name.size() >= kSectionNameSize)
    return fail("section name " + quoted(name) + " must be 1 to " +
                std::to_string(kSectionNameSize - 1) + " bytes");
  for (unsigned char c : name)
    if (c <= 0x20 || c >= 0x7f)
      return fail("section name " + quoted(name) +
                  " has a character that is not printable ASCII");
  return Status::ok();
}

Status parseHeader(const uint8_t *data, uint64_t fileSize,
                   std::string *compilerVersion,
                   std::vector<SectionRecord> *sections) {
  if (std::memcmp(data, kMagic, fileSize < 8 ? fileSize : 8))
    return fail("not an ingot artifact (bad magic)");
  if (fileSize < kFixedHeaderSize)
    return fail("truncated: " + std::to_string(fileSize) +
                " bytes is smaller than the artifact header");
  uint32_t version = getU32(data + 8);
  if (version != kArtifactFormatVersion)
    return fail("this artifact was written by format version " +
                std::to_string(version) + "; this runtime reads version " +
                std::to_string(kArtifactFormatVersion) +
                ": recompile it with this ingot");
  uint32_t size = getU32(data + 12), count = getU32(data + 16),
           cvSize = getU32(data + 20);
  if (count > kMaxSections || cvSize > kMaxCompilerVersionSize ||
      size != headerSize(cvSize, count))
    return fail("corrupt header: inconsistent header size fields");
  if (size > fileSize)
    return fail("truncated: the header needs " + std::to_string(size) +
                " bytes but the file has " + std::to_string(fileSize));
  if (getU64(data + size - 8) != checksum64(data, size - 8))
    return fail("checksum mismatch in the header: the file is corrupted");

  compilerVersion->assign(
      reinterpret_cast<const char *>(data) + kFixedHeaderSize, cvSize);
  sections->clear();
  const uint8_t *e = data + kFixedHeaderSize + alignUp(cvSize, 8);
  uint64_t prevEnd = size;
  std::set<std::string> seen;
  for (uint32_t i = 0; i < count; ++i, e += kSectionEntrySize) {
    SectionRecord s;
    size_t len = strnlen(reinterpret_cast<const char *>(e), kSectionNameSize);
    s.name.assign(reinterpret_cast<const char *>(e), len);
    if (Status st = checkSectionName(s.name); !st)
      return fail("section " + std::to_string(i) + ": " + st.message());
    s.offset = getU64(e + kSectionNameSize);
    s.size = getU64(e + kSectionNameSize + 8);
    s.checksum = getU64(e + kSectionNameSize + 16);
    std::string what = "section " + quoted(s.name);
    if (!seen.insert(s.name).second)
      return fail("duplicate " + what);
    uint64_t align = s.name == kWeightsSection ? kWeightsAlign : kSectionAlign;
    if (s.offset % align)
      return fail(what + " at offset " + std::to_string(s.offset) + " is not " +
                  std::to_string(align) + "-byte aligned");
    if (s.offset < prevEnd)
      return fail(what + " overlaps the header or the previous section");
    if (s.offset > fileSize || s.size > fileSize - s.offset)
      return fail(what + " (offset " + std::to_string(s.offset) + ", " +
                  std::to_string(s.size) + " bytes) runs past the end of the " +
                  std::to_string(fileSize) + "-byte file: it is truncated");
    // Padding is not covered by any checksum, so it must be exactly zero.
    for (uint64_t p = prevEnd; p < s.offset; ++p)
      if (data[p])
        return fail("nonzero padding byte at offset " + std::to_string(p) +
                    ": the file is corrupted");
    prevEnd = s.offset + s.size;
    sections->push_back(std::move(s));
  }
  if (!seen.count(kManifestSection) || !seen.count(kWeightsSection))
    return fail("corrupt header: missing the manifest or weights section");
  if (prevEnd != fileSize)
    return fail("file is " + std::to_string(fileSize) +
                " bytes but its sections end at " + std::to_string(prevEnd) +
                ": trailing bytes or a corrupted section table");
  return Status::ok();
}

} // namespace ingot::format
