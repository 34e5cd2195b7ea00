//===- Checksum.cpp - XXH3-64 through libxxhash's header --------------===//
#include "ingot/Checksum.h"

// Inlined into this file only: no shared-library dependency, and the
// runtime's headers stay free of xxhash's macros.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <new>

namespace ingot {

struct Checksum64::State {
  XXH3_state_t xxh;
};

Checksum64::Checksum64() : state_(new State) {
  XXH3_64bits_reset(&state_->xxh);
}

Checksum64::~Checksum64() = default;

void Checksum64::update(const void *data, size_t size) {
  if (size > 0)
    XXH3_64bits_update(&state_->xxh, data, size);
}

uint64_t Checksum64::finish() const { return XXH3_64bits_digest(&state_->xxh); }

uint64_t checksum64(const void *data, size_t size) {
  return XXH3_64bits(size > 0 ? data : nullptr, size);
}

} // namespace ingot
