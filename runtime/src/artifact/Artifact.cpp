//===- Artifact.cpp - Map and validate a model.ingot file -----------------===//
//
// open() maps the file read-only and checks it completely before handing it
// out: header, section table, every section's checksum, the manifest's
// decoding and its structure. Nothing after open() needs to re-check offsets.
//
//===----------------------------------------------------------------------===//
#include "ingot/Artifact.h"

#include "ExternalWeights.h"

#include "ingot/ArtifactFormat.h"
#include "ingot/Checksum.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ingot {

using namespace format;

Artifact::~Artifact() {
  if (base_)
    ::munmap(const_cast<uint8_t *>(base_), size_);
  if (space_)
    ::munmap(space_, spaceSize_);
}

namespace {

/// The weights of an artifact compiled with --weights=external, made in
/// anonymous memory from the files in options.weightsDir; or the refusal
/// of a --weights DIR that does not fit the artifact.
Status makeExternalWeights(const Manifest &m, const LoadOptions &options,
                           uint8_t **space, uint64_t *spaceSize) {
  const ExternalWeights &w = m.externalWeights;
  if (w.empty())
    return options.weightsDir.empty()
               ? Status::ok()
               : Status::error("holds its own weights; --weights is only "
                               "for an artifact compiled with "
                               "--weights=external");
  if (options.skipExternalWeights)
    return Status::ok();
  if (options.weightsDir.empty()) {
    std::string files;
    for (size_t i = 0; i < w.files.size() && i < 3; ++i)
      files += (i ? ", " : "") + w.files[i];
    if (w.files.size() > 3)
      files += ", ...";
    return Status::error("keeps its weights outside (compiled with "
                         "--weights=external): pass --weights DIR, the "
                         "model directory that holds " +
                         files);
  }
  void *map = ::mmap(nullptr, w.spaceBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED)
    return Status::error(
        "cannot allocate " + std::to_string(w.spaceBytes) +
        " bytes for its external weights: " + std::strerror(errno));
  *space = static_cast<uint8_t *>(map);
  *spaceSize = w.spaceBytes;
  return loadExternalWeights(m, options.weightsDir, *space);
}

} // namespace

Status Artifact::open(const std::string &path, std::unique_ptr<Artifact> *out,
                      const LoadOptions &options) {
  auto fail = [&](const std::string &msg) {
    return Status::error(path + ": " + msg);
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return fail(std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return fail("empty file: not an ingot artifact");
  }
  void *map =
      ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  int mapErr = errno;
  ::close(fd); // the mapping keeps the file alive
  if (map == MAP_FAILED)
    return fail(std::string("cannot map the file: ") + std::strerror(mapErr));

  // From here the Artifact owns the mapping; early returns unmap it.
  std::unique_ptr<Artifact> a(new Artifact());
  a->path_ = path;
  a->base_ = static_cast<const uint8_t *>(map);
  a->size_ = uint64_t(st.st_size);

  std::string compilerVersion;
  std::vector<SectionRecord> records;
  if (Status s = parseHeader(a->base_, a->size_, &compilerVersion, &records);
      !s)
    return fail(s.message());
  const SectionRecord *manifestSec = nullptr, *weightsSec = nullptr;
  for (const SectionRecord &r : records) {
    if (checksum64(a->base_ + r.offset, r.size) != r.checksum)
      return fail("checksum mismatch in section '" + r.name +
                  "': the file is corrupted");
    if (r.name == kManifestSection)
      manifestSec = &r;
    else if (r.name == kWeightsSection)
      weightsSec = &r;
    a->sections_.push_back({r.name, r.offset, r.size});
  }

  Manifest &m = a->manifest_;
  if (Status s =
          decodeManifest(a->base_ + manifestSec->offset, manifestSec->size, &m);
      !s)
    return fail(s.message());
  if (m.compilerVersion != compilerVersion)
    return fail("the manifest and the header disagree on the compiler version");
  if (Status s = validateManifest(m, weightsSec->size); !s)
    return fail("invalid manifest: " + s.message());
  std::vector<std::pair<std::string, uint64_t>> code;
  for (const SectionRecord &r : records)
    if (r.name.rfind(kCodePrefix, 0) == 0)
      code.emplace_back(r.name.substr(std::strlen(kCodePrefix)), r.size);
  if (Status s = validateCodeSections(m, code); !s)
    return fail(s.message());
  a->weightsOffset_ = weightsSec->offset;
  a->weightsDir_ = m.externalWeights.empty() ? "" : options.weightsDir;
  if (Status s = makeExternalWeights(m, options, &a->space_, &a->spaceSize_);
      !s)
    return fail(s.message());
  *out = std::move(a);
  return Status::ok();
}

const uint8_t *Artifact::codeObjectData(const GpuTarget &target,
                                        const CodeObject &object) const {
  const std::string name = kCodePrefix + target.name;
  for (const SectionInfo &s : sections_)
    if (s.name == name && object.offset <= s.size &&
        object.bytes <= s.size - object.offset)
      return base_ + s.offset + object.offset;
  return nullptr;
}

const uint8_t *Artifact::tensorData(size_t tensorIndex) const {
  if (tensorIndex >= manifest_.tensors.size())
    return nullptr;
  const TensorEntry &t = manifest_.tensors[tensorIndex];
  if (t.external)
    return space_ ? space_ + t.offset : nullptr;
  return base_ + weightsOffset_ + t.offset;
}

} // namespace ingot
