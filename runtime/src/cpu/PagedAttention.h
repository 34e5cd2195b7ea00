//===- PagedAttention.h - Validated plan of a paged attention step -*- C++
//-*-===//
//
// Shared by the attention loops (PagedAttention.cpp) and the validation that
// builds the plan (PagedAttentionPlan.cpp): everything a step reads, checked
// before the step touches the cache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelRegistry.h"

#include "ingot/KvCache.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ingot::cpu {

struct AttnGeometry {
  int64_t layer = 0, heads = 0, kvHeads = 0, headDim = 0, window = 0;
  double scale = 1.0;
  double softcap = 0; // > 0: scores become softcap·tanh(score / softcap)
  // First column of q, k and v within their inputs' rows.
  int64_t qOffset = 0, kOffset = 0, vOffset = 0;
};

/// Everything the attention loops read, validated.
struct AttnPlan {
  AttnGeometry g;
  int64_t tokens = 0, seqs = 0, tableWidth = 0, blockSize = 0;
  // Row t of q is q[t * qStride .. + heads·headDim) (offset applied), and
  // likewise k and v with kvHeads·headDim values.
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  int64_t qStride = 0, kStride = 0, vStride = 0;
  float *out = nullptr;
  float *keys = nullptr, *values = nullptr; // this layer's f32 cache
  // An 8-bit cache (KvCache.h) instead: values and per-row scales.
  DType kvDtype = DType::F32;
  uint8_t *keys8 = nullptr, *values8 = nullptr;
  float *keyScales = nullptr, *valueScales = nullptr;
  uint16_t *keys16 = nullptr, *values16 = nullptr; // or a bfloat16 cache
  // The cache's layout (KvCacheView): KV head kvh's row of the token at
  // offset o of block b is at b * blockFloats + kvh * headStride
  // + o * rowStride.
  int64_t blockFloats = 0, headStride = 0, rowStride = 0;
  const void *table = nullptr;
  bool table64 = false;
  std::vector<int64_t> positions, slots, queryEnds, seqOf;
  // rope_paged_attention: rotary dims (0: no rotation) and each token's
  // f32 cos/sin of its rotaryDim/2 angles, [tokens, rotaryDim/2].
  int64_t rotaryDim = 0;
  std::vector<float> ropeCos, ropeSin;

  int64_t entry(int64_t s, int64_t b) const {
    const int64_t i = s * tableWidth + b;
    return table64 ? static_cast<const int64_t *>(table)[i]
                   : int64_t(static_cast<const int32_t *>(table)[i]);
  }
  /// First float of KV head `kvh`'s rows in cache block `block`.
  int64_t headBase(int64_t block, int64_t kvh) const {
    return block * blockFloats + kvh * headStride;
  }
  int64_t windowStart(int64_t p) const {
    return g.window > 0 ? std::max<int64_t>(0, p - g.window + 1) : 0;
  }
};

/// Window positions per chunk. Chunks start at multiples of this absolute
/// position (or at the window start), so where a window is cut depends only
/// on the token's own position and the sliding window.
constexpr int64_t kAttnChunk = 256;

inline int64_t firstChunk(const AttnPlan &pl, int64_t tok) {
  return pl.windowStart(pl.positions[tok]) / kAttnChunk;
}
inline int64_t chunkCount(const AttnPlan &pl, int64_t tok) {
  return pl.positions[tok] / kAttnChunk - firstChunk(pl, tok) + 1;
}

/// Floats of one chunk's partial result: [G] maxes, [G] sums, [G, d] sums.
inline int64_t partialFloats(const AttnGeometry &g) {
  return g.heads / g.kvHeads * (g.headDim + 2);
}

/// Asks for the next block's run of `rows` rows, starting at element `at`
/// of `base`, while this one is computed: each run is its own few KiB
/// somewhere in the pool, where the hardware prefetcher, which follows
/// streams within a page, would start cold.
inline void prefetchRun(const AttnPlan &pl, const void *base, size_t elemBytes,
                        int64_t at, int64_t rows) {
  const char *p = static_cast<const char *>(base) + at * int64_t(elemBytes);
  const int64_t bytes =
      ((rows - 1) * pl.rowStride + pl.g.headDim) * int64_t(elemBytes);
  for (int64_t o = 0; o < bytes; o += 64)
    __builtin_prefetch(p + o, 0, 3);
}

/// Merges the `chunks` partial results of one (token, KV head) window in
/// chunk order into the output (PagedAttention.cpp).
void combineChunks(const AttnPlan &pl, int64_t tok, int64_t kvh,
                   const float *partials, int64_t chunks);

struct AttentionOps;
/// Attention of every (token, KV head) of the step, the step's K/V already
/// in the cache: runs of consecutive positions of one sequence are taken
/// together, with the bits each token gets alone (PagedAttentionTiles.cpp).
void attendTokenRuns(const KernelContext &ctx, const AttnPlan &pl,
                     const AttentionOps &ops);
/// Chunk `c` (counted from the token's first) of token `tok`'s window for
/// KV head `kvh`, as attendTokenRuns computes it: its partial result goes
/// to partials + c·partialFloats (PagedAttentionTiles.cpp).
void attendTokenChunk(const AttnPlan &pl, const AttentionOps &ops, int64_t tok,
                      int64_t kvh, int64_t c, float *partials);

/// Reads layer, heads, head_dim, scale, sliding_window, softcap and the
/// offsets.
Status readAttnGeometry(const KernelContext &ctx, AttnGeometry *g);
/// Operand shapes and column ranges, the cache geometry, slots and sequence
/// boundaries; sets every field but `out` and the rope tables.
Status buildAttnPlan(const KernelContext &ctx, const KvCacheView &kv,
                     AttnPlan *pl);
/// Every block-table entry a token's window reads must name a real block.
Status checkAttnTables(const KernelContext &ctx, const AttnPlan &pl,
                       int64_t numBlocks);

} // namespace ingot::cpu
