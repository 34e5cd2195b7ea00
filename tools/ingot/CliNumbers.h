//===- CliNumbers.h - Integer flag values of the `ingot` CLI ----*- C++ -*-===//
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace ingot::cli {

/// A whole decimal int64 (no trailing text, no overflow), else false.
inline bool parseInt64(const char *s, int64_t *out) {
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (!*s || *end || errno)
    return false;
  *out = v;
  return true;
}

/// parseInt64 that also refuses values below `min`.
inline bool parseInt64AtLeast(const char *s, int64_t *out, int64_t min) {
  int64_t v = 0;
  if (!parseInt64(s, &v) || v < min)
    return false;
  *out = v;
  return true;
}

} // namespace ingot::cli
