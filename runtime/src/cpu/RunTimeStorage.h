//===- RunTimeStorage.h - Memory of a buffer sized at run time ------------===//
//
// A result whose size depends on tensor values (Range's limit, Resize's
// run-time scales) has no compiled bound, so it cannot live in the arena.
// Its storage grows to what the kernel asks for when it sets the output's
// shape and is kept across runs, so steady-state runs do not allocate.
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_RUNTIME_CPU_RUNTIMESTORAGE_H
#define INGOT_RUNTIME_CPU_RUNTIMESTORAGE_H

#include "ingot/Status.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace ingot::cpu {

class RunTimeStorage {
public:
  /// `limitBytes` caps one buffer: a value-driven size (Range to 1e12) is
  /// refused instead of being overcommitted and OOM-killed when touched.
  explicit RunTimeStorage(uint64_t limitBytes) : limit_(limitBytes) {}

  /// Makes room for `bytes` (64-B aligned); contents are not kept. The
  /// error names the size and the limit; the caller adds the buffer.
  Status reserve(uint64_t bytes);

  void *data() const { return data_.get(); }
  uint64_t capacity() const { return capacity_; }

private:
  uint64_t limit_;
  std::unique_ptr<uint8_t, void (*)(void *)> data_{nullptr, std::free};
  uint64_t capacity_ = 0;
};

} // namespace ingot::cpu

#endif // INGOT_RUNTIME_CPU_RUNTIMESTORAGE_H
