//===- RunTimeStorage.cpp - Memory of a buffer sized at run time ----------===//
#include "cpu/RunTimeStorage.h"

#include <string>

namespace ingot::cpu {

Status RunTimeStorage::reserve(uint64_t bytes) {
  if (bytes <= capacity_ && data_)
    return Status::ok();
  if (bytes > limit_)
    return Status::error("needs " + std::to_string(bytes) +
                         " bytes, more than the " + std::to_string(limit_) +
                         " bytes of physical memory");
  // Grow by at least half again, so sizes creeping up across runs do not
  // reallocate every run.
  uint64_t grown = capacity_ + capacity_ / 2;
  uint64_t want = bytes > grown ? bytes : (grown < limit_ ? grown : bytes);
  want = (want + 63) / 64 * 64;
  if (want == 0)
    want = 64;
  data_.reset(static_cast<uint8_t *>(std::aligned_alloc(64, want)));
  if (!data_) {
    capacity_ = 0;
    return Status::error("cannot allocate " + std::to_string(want) + " bytes");
  }
  capacity_ = want;
  return Status::ok();
}

} // namespace ingot::cpu
