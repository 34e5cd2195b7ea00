//===- PosixRead.h - Whole reads at an offset -------------------*- C++ -*-===//
//
// The model-file readers (safetensors, GGUF, and the runtime's loader of
// external weights) read validated ranges of a file with pread; this
// retries short reads and EINTR so that each caller sees one success or
// failure per range.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cerrno>
#include <cstdint>
#include <unistd.h>

namespace ingot {

/// Reads exactly `size` bytes at `offset`; false on an error or end of file.
inline bool preadAll(int fd, void *dst, uint64_t size, uint64_t offset) {
  char *p = static_cast<char *>(dst);
  while (size > 0) {
    ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

} // namespace ingot
