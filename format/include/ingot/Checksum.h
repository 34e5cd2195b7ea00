//===- Checksum.h - 64-bit checksum of artifact sections --------*- C++ -*-===//
//
// XXH3-64 (libxxhash, used header-only) guards artifact sections against
// corruption: bad disks, truncated copies, bit flips. It is non-cryptographic
// (an artifact from an untrusted source is still validated structurally
// before use) and measured here as fast as or faster than the checksum it
// replaced, so a large weight section costs a fraction of a second to check.
// Changing the function changes every artifact's bytes: bump
// kArtifactFormatVersion with it (ChecksumTest pins known answers).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ingot {

/// Incremental form: feed bytes in any chunking, the result is the same.
class Checksum64 {
public:
  Checksum64();
  ~Checksum64();
  Checksum64(const Checksum64 &) = delete;
  Checksum64 &operator=(const Checksum64 &) = delete;
  void update(const void *data, size_t size);
  /// The checksum of everything fed so far (does not reset the state).
  uint64_t finish() const;

private:
  struct State; // XXH3's streaming state, kept out of this header
  std::unique_ptr<State> state_;
};

/// One-shot form.
uint64_t checksum64(const void *data, size_t size);

} // namespace ingot
