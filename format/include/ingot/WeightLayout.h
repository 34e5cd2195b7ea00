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
// "q16": a [N, K] q8, q4 or q4m weight in groups of 32 (Quant.h), or a q8
//   one per output channel (one group of K), N a multiple of 16 and K of
//   32, as panels of 16 rows. A panel holds, for each block b of g values
//   (values gb..gb+g-1 of every row): the 16 rows' f16 d (row order), for
//   q4m then their 16 f16 m, then the values as 64-byte chunks whose byte
//   4r+j belongs to row r. q8: chunk c (0..g/4-1) holds value gb+4c+j of
//   row r in byte 4r+j, plus 128 (the int8 with its sign bit flipped: the
//   unsigned operand of VNNI's u8 x s8 product). q4: chunk c (0..3) holds
//   value 32b+8c+j in the low nibble and 32b+8c+4+j in the high one. One
//   chunk (or nibble half) is the u8 operand of a 16-lane int8 dot
//   product whose lane r is output row r: the "q16" kernels compute 16
//   outputs per instruction without a horizontal sum. Same byte count as
//   row-major.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"
#include "ingot/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

/// Rows per "q16" panel and values per "q16" block.
constexpr int64_t kQ16PanelRows = 16;
constexpr int64_t kQ16Block = 32;

/// Why a tensor of format `t`, shape [n, k] and group `group` cannot be
/// stored as "q16" ("" when it can).
std::string q16Unsupported(DType t, int64_t n, int64_t k, int64_t group);

/// Repacks a row-major q8/q4/q4m [n, k] tensor of `group`-value blocks
/// (src, quantTensorBytes bytes) into "q16" at dst (the same size, no
/// alias).
Status packQ16(DType t, const void *src, int64_t n, int64_t k, int64_t group,
               void *dst);

/// Row `row` of a "q16" tensor as its row-major blocks (quantRowBytes
/// bytes at dst): the inverse of packQ16 for one row.
void unpackQ16Row(DType t, const void *src, int64_t k, int64_t group,
                  int64_t row, void *dst);

/// Whether `layout` fits a tensor of dtype `t`, `shape` and `group`
/// (error naming what is wrong otherwise).
Status checkWeightLayout(const std::string &layout, DType t,
                         const std::vector<int64_t> &shape, int64_t group);

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
