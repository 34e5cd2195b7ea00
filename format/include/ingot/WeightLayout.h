//===- WeightLayout.h - Packed weight layouts of the artifact ---*- C++ -*-===//
//
// A weight tensor's TensorEntry::layout says how its bytes are ordered. The
// compiler packs at compile time (ingot-pack-weights records the layout, the
// artifact writer calls packWeight), so nothing is repacked at load.
//
// "row-major": the logical shape, C order.
// "nk16": a [N, K] linear weight as panels of 16 rows (the last panel has
//   N % 16 rows if that is not 0); a panel of r rows holds, for each full
//   64-byte chunk c of K (16 f32 or 32 f16/bf16 values), its r rows' chunk
//   (row after row), then the K % chunk tail values of each row, row after
//   row. The "nk" kernels then stream one contiguous run per panel instead
//   of r separate rows; a chunk is one cache line, one zmm of f32 or one
//   zmm of packed bf16 pairs (the AVX-512 kernel's 32-value pair split), so
//   no vector step straddles two chunks. Same byte count as row-major;
//   element dtype unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ingot {

constexpr int64_t kNk16PanelRows = 16;
constexpr int64_t kNk16ChunkBytes = 64;

/// Values per "nk16" chunk for elements of `elemBytes` bytes.
constexpr int64_t nk16Chunk(size_t elemBytes) {
  return kNk16ChunkBytes / int64_t(elemBytes);
}

/// Whether the runtime knows `layout` ("row-major" or a packed one).
bool isKnownWeightLayout(const std::string &layout);

/// Repacks a row-major [n, k] matrix of `elemBytes`-sized elements into
/// `layout` (dst holds n * k * elemBytes bytes, not aliasing src).
Status packWeight(const std::string &layout, const void *src, int64_t n,
                  int64_t k, size_t elemBytes, void *dst);

/// Offset in elements of element (row, col) of an "nk16" [n, k] matrix of
/// `elemBytes`-sized elements.
inline int64_t nk16Index(int64_t row, int64_t col, int64_t n, int64_t k,
                         size_t elemBytes) {
  const int64_t chunk = nk16Chunk(elemBytes);
  const int64_t p0 = row / kNk16PanelRows * kNk16PanelRows;
  const int64_t rows = (n - p0) < kNk16PanelRows ? n - p0 : kNk16PanelRows;
  const int64_t r = row - p0, full = k / chunk * chunk;
  const int64_t at = p0 * k; // panels before this one hold p0 full rows
  if (col < full)
    return at + (col / chunk) * rows * chunk + r * chunk + col % chunk;
  return at + full * rows + r * (k - full) + (col - full);
}

} // namespace ingot
