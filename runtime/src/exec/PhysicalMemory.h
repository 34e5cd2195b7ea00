//===- PhysicalMemory.h - The machine's RAM, for allocation limits -*- C++
//-*-===//
//
// The KV cache and the activation arena are lazily committed mappings, so a
// size far beyond the machine's memory maps fine and is OOM-killed only
// when touched, mid-run. Their sizes are compared with this at load.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace ingot {

/// Bytes of physical memory (sysconf), or UINT64_MAX when unknown.
inline uint64_t physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  uint64_t bytes;
  if (__builtin_mul_overflow(uint64_t(pages), uint64_t(pageSize), &bytes))
    return UINT64_MAX;
  return bytes;
}

/// "1.5 GiB" for messages.
inline std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6)
    v /= 1024, ++u;
  char buf[48];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

} // namespace ingot
