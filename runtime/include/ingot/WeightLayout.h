//===- WeightLayout.h - Packed weight layouts of the artifact ---*- C++ -*-===//
//
// A weight tensor's TensorEntry::layout says how its bytes are ordered. The
// compiler packs at compile time (ingot-pack-weights records the layout, the
// artifact writer calls packWeight), so nothing is repacked at load.
//
// "row-major": the logical shape, C order.
// "nk16": a [N, K] linear weight as panels of 16 rows (the last panel has
//   N % 16 rows if that is not 0); a panel of r rows holds, for each full
//   16-element chunk c of K, its r rows' 16 values (row after row), then
//   the K % 16 tail values of each row, row after row. The "nk" kernel then
//   streams one contiguous run per panel instead of r separate rows. Same
//   byte count as row-major; element dtype unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ingot {

constexpr int64_t kNk16PanelRows = 16;
constexpr int64_t kNk16Chunk = 16;

/// Whether the runtime knows `layout` ("row-major" or a packed one).
bool isKnownWeightLayout(const std::string &layout);

/// Repacks a row-major [n, k] matrix of `elemBytes`-sized elements into
/// `layout` (dst holds n * k * elemBytes bytes, not aliasing src).
Status packWeight(const std::string &layout, const void *src, int64_t n,
                  int64_t k, size_t elemBytes, void *dst);

/// Offset in elements of element (row, col) of an "nk16" [n, k] matrix.
inline int64_t nk16Index(int64_t row, int64_t col, int64_t n, int64_t k) {
  const int64_t panel = row / kNk16PanelRows;
  const int64_t p0 = panel * kNk16PanelRows;
  const int64_t rows = (n - p0) < kNk16PanelRows ? n - p0 : kNk16PanelRows;
  const int64_t r = row - p0, full = k / kNk16Chunk * kNk16Chunk;
  int64_t at = p0 * k; // panels before this one hold p0 full rows
  if (col < full)
    return at + (col / kNk16Chunk) * rows * kNk16Chunk + r * kNk16Chunk +
           col % kNk16Chunk;
  return at + full * rows + r * (k - full) + (col - full);
}

} // namespace ingot
