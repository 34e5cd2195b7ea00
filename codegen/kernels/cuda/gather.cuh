//===- gather.cuh - Embedding rows (gather along axis 0) --------*- C++ -*-===//
//
// The case of the runtime's gather (runtime/src/cpu/DataMovement.cpp) that
// a language model's token embedding uses: rows of a 2-D [vocab, D] table
// picked by token ids, widened to f32.
//
// Launch: grid.x = number of ids, block = BLOCK threads (any count; a
// multiple of 32 keeps loads coalesced). Block t copies row ids[t] of the
// table into row t of y, thread i taking columns i, i + BLOCK, ...
//
// Differences from the CPU gather, which the compiler accounts for:
// - y is f32 whatever the table's dtype (the CPU gather keeps a float
//   table's dtype and only decodes quantised tables to f32), i.e. this is
//   gather followed by a cast to f32.
// - An id outside [-vocab, vocab) cannot raise an error from a kernel: its
//   row of y is filled with quiet NaNs instead, which poisons everything
//   downstream visibly. The engine validates token ids before a step, so
//   this happens only on an engine bug.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "prelude.cuh"

namespace ingot_k {

/// y[t, :] = f32(table[ids[t], :]) for the row of each id; a negative id
/// counts from the end (id + vocab), as the CPU gather's does. W is float,
/// Bf16 or F16; Index is i64 or i32.
template <int D, int BLOCK, typename W, typename Index>
INGOT_DEVICE void embeddingRows(const W *table, const Index *ids, float *y,
                                i64 vocab) {
  static_assert(D > 0 && BLOCK > 0, "shape");
  const i64 t = blockIdx.x;
  float *out = y + t * D;
  i64 id = static_cast<i64>(ids[t]);
  if (id < 0)
    id += vocab;
  if (id < 0 || id >= vocab) {
    const float qnan = __uint_as_float(0x7fc00000u);
    for (int c = threadIdx.x; c < D; c += BLOCK)
      out[c] = qnan;
    return;
  }
  // Consecutive threads read consecutive elements: coalesced, and the
  // whole row is read once.
  const W *row = table + id * D;
  for (int c = threadIdx.x; c < D; c += BLOCK)
    out[c] = widen(row[c]);
}

/// The CPU gather of a 16-bit table exactly: rows copied bit for bit
/// (f16 or bf16 stays what it is; the plan's cast to f32 follows as its
/// own step). An id out of range gives a row of `nanBits` (a quiet NaN of
/// the table's format). Launch as embeddingRows.
template <int D, int BLOCK, typename Index>
INGOT_DEVICE void gatherRows16(const u16 *table, const Index *ids, u16 *y,
                               i64 vocab, u16 nanBits) {
  static_assert(D > 0 && BLOCK > 0, "shape");
  const i64 t = blockIdx.x;
  u16 *out = y + t * D;
  i64 id = static_cast<i64>(ids[t]);
  if (id < 0)
    id += vocab;
  const bool valid = id >= 0 && id < vocab;
  const u16 *row = table + (valid ? id : 0) * D;
  for (int c = threadIdx.x; c < D; c += BLOCK)
    out[c] = valid ? row[c] : nanBits;
}

} // namespace ingot_k
