//===- WeightLayout.cpp - Packing weights into the kernels' layouts -------===//
#include "ingot/WeightLayout.h"

#include <cstring>

namespace ingot {

bool isKnownWeightLayout(const std::string &layout) {
  return layout == "row-major" || layout == "nk16";
}

Status packWeight(const std::string &layout, const void *src, int64_t n,
                  int64_t k, size_t elemBytes, void *dst) {
  if (layout == "row-major") {
    std::memcpy(dst, src, size_t(n * k) * elemBytes);
    return Status::ok();
  }
  if (layout != "nk16")
    return Status::error("unknown weight layout '" + layout +
                         "'; known: row-major, nk16");
  const auto *in = static_cast<const uint8_t *>(src);
  auto *out = static_cast<uint8_t *>(dst);
  // Runs of a row stay contiguous in both layouts: copy each chunk whole.
  if (elemBytes == 0 || kNk16ChunkBytes % int64_t(elemBytes) != 0)
    return Status::error("nk16 needs 1, 2, 4 or 8-byte elements, got " +
                         std::to_string(elemBytes));
  const int64_t chunk = nk16Chunk(elemBytes), full = k / chunk * chunk;
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t c = 0; c < full; c += chunk)
      std::memcpy(out + size_t(nk16Index(row, c, n, k, elemBytes)) * elemBytes,
                  in + size_t(row * k + c) * elemBytes,
                  size_t(chunk) * elemBytes);
    if (full < k)
      std::memcpy(out +
                      size_t(nk16Index(row, full, n, k, elemBytes)) * elemBytes,
                  in + size_t(row * k + full) * elemBytes,
                  size_t(k - full) * elemBytes);
  }
  return Status::ok();
}

} // namespace ingot
