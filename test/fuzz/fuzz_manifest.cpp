//===- fuzz_manifest.cpp - manifest bytes in a well-formed artifact -------===//
//
// Random bytes rarely pass the section checksums, so fuzz_artifact mostly
// tests the checksum. Here the fuzzed bytes are the manifest alone: the
// target wraps them in the header, weights and code sections of a real
// artifact (the first byte picks micro.ingot or mlp.ingot) with every
// checksum recomputed, so what is tested is the manifest decoder and the
// plan validator, then one step of whatever validates.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "ingot/ArtifactFormat.h"
#include "ingot/Checksum.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace ingot;
using namespace ingot::format;

namespace {

struct SeedArtifact {
  std::vector<uint8_t> bytes;
  std::string compilerVersion;
  std::vector<SectionRecord> sections; // [0] is the manifest
};

SeedArtifact loadSeed(const char *name) {
  SeedArtifact seed;
  const std::string path = fuzz::artifactDir() + "/" + name;
  std::ifstream in(path, std::ios::binary);
  seed.bytes.assign(std::istreambuf_iterator<char>(in), {});
  Status st = parseHeader(seed.bytes.data(), seed.bytes.size(),
                          &seed.compilerVersion, &seed.sections);
  if (!st || seed.sections.empty() ||
      seed.sections[0].name != kManifestSection) {
    std::fprintf(stderr, "fuzz: %s: not a usable seed artifact: %s\n",
                 path.c_str(), st.message().c_str());
    std::abort(); // a broken setup, not a finding
  }
  return seed;
}

const SeedArtifact &seedArtifact(uint8_t selector) {
  static const SeedArtifact seeds[] = {loadSeed("micro.ingot"),
                                       loadSeed("mlp.ingot")};
  return seeds[selector % 2];
}

/// The seed's sections with the manifest replaced, laid out and
/// checksummed as the writer does.
std::vector<uint8_t> rebuild(const SeedArtifact &seed, const uint8_t *manifest,
                             size_t size) {
  std::vector<SectionRecord> sections = seed.sections;
  sections[0].size = size;
  sections[0].checksum = checksum64(manifest, size);
  uint64_t end = headerSize(seed.compilerVersion.size(), sections.size());
  for (SectionRecord &s : sections) {
    s.offset = alignUp(end, s.name == kWeightsSection ? kWeightsAlign
                                                      : kSectionAlign);
    end = s.offset + s.size;
  }
  std::vector<uint8_t> out(end, 0);
  const std::vector<uint8_t> header =
      encodeHeader(seed.compilerVersion, sections);
  std::copy(header.begin(), header.end(), out.begin());
  std::copy(manifest, manifest + size, out.begin() + sections[0].offset);
  for (size_t i = 1; i < sections.size(); ++i) {
    const uint8_t *from = seed.bytes.data() + seed.sections[i].offset;
    std::copy(from, from + sections[i].size,
              out.begin() + sections[i].offset);
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const std::vector<uint8_t> file =
      rebuild(seedArtifact(data[0]), data + 1, size - 1);
  ingot::fuzz::exerciseArtifact(
      ingot::fuzz::writeScratch("manifest.ingot", file.data(), file.size()),
      data, size);
  return 0;
}
