//===- Linear.h - Decode (few-row) kernels of the linear op -----*- C++ -*-===//
//
// With a handful of activation rows, y = x·Wᵀ is bound by the bandwidth of
// reading W, so these kernels stream every weight element exactly once for
// all rows, widen f16/bf16 to f32 in registers, and accumulate in f32.
// One implementation per ISA (LinearAvx2.cpp, LinearAvx512.cpp, generic in
// LinearDecode.cpp), chosen once at run time from CPUID. Linear.cpp runs
// them for every row count, prefill included, so that no row's sums depend
// on the batch (see there).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelUtil.h"
#include "ingot/DType.h"
#include "ingot/WeightLayout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#include <xmmintrin.h>

namespace ingot::cpu {

/// Most activation rows one call of the "nk"/"kn" kernels takes; Linear.cpp
/// passes more in groups (every row's sums are independent of the others,
/// which keeps linear batch invariant). The "nk" kernels keep each block of
/// weight rows in L1 while they go through the rows of x in tiles; the
/// "kn" kernels hold one accumulator row per row of x in L1.
constexpr int64_t kLinearNkMaxRows = 32;
constexpr int64_t kLinearKnMaxRows = 8;

struct LinearDecodeArgs {
  int64_t m = 0, n = 0, k = 0;
  const float *x = nullptr;    // m x k, dense
  const void *w = nullptr;     // [n, k] ("nk") or [k, n] ("kn"), dtype wType
  DType wType = DType::F32;    // F32, F16 or BF16
  const float *bias = nullptr; // n values or nullptr
  float *y = nullptr;          // m x n, dense
  /// For "nk": w is [n, k] packed as "nk16" (WeightLayout.h) rather than
  /// row-major. Every output element's sum is the same in both.
  bool nk16 = false;
  /// For "kn" with many rows: w already in knMany's panels (packKn's
  /// layout), or null to pack each panel as it is reached.
  const float *knPanels = nullptr;
};

/// Zeroed floats starting on a 64-byte boundary (the kernels load panels
/// aligned). A move keeps the buffer, so data() stays where it was.
struct AlignedFloats {
  std::vector<float> storage;
  size_t offset = 0;
  explicit AlignedFloats(size_t n = 0) : storage(n + 16) {
    const auto at = reinterpret_cast<uintptr_t>(storage.data());
    offset = (64 - at % 64) % 64 / sizeof(float);
  }
  float *data() { return storage.data() + offset; }
  const float *data() const { return storage.data() + offset; }
};

/// Computes y[:, n0:n1) for all m rows.
using LinearRangeFn = void (*)(const LinearDecodeArgs &args, int64_t n0,
                               int64_t n1);
/// dst[i] = float(src[i]) for `count` elements of dtype t (F32/F16/BF16).
using WidenFn = void (*)(DType t, const void *src, int64_t count, float *dst);

struct LinearKernelSet {
  LinearRangeFn nk; // W is [n, k]: one dot product per output feature
  LinearRangeFn kn; // W is [k, n]: rows of W scaled into accumulator rows
  WidenFn widen;    // f32 copies of f16/bf16 vectors (bias, norm weights)
  /// "kn" for any number of rows, bitwise equal to `kn` on every row;
  /// null where the ISA has none (rows then go to `kn` in groups).
  LinearRangeFn knMany;
  /// All of W in the panels knMany reads (LinearDecodeArgs::knPanels):
  /// a weight's are kept in the step's cache. Null with knMany.
  AlignedFloats (*packKn)(const LinearDecodeArgs &args);
};

const LinearKernelSet &genericLinearKernels();
const LinearKernelSet &avx2LinearKernels();   // needs AVX2, FMA, F16C
const LinearKernelSet &avx512LinearKernels(); // needs AVX-512F

/// The best set this CPU supports (INGOT_GEMM_ISA caps it, as for GEMM).
const LinearKernelSet &bestLinearKernels();

/// Weight storage kinds, as template parameters of the ISA kernels.
enum class WKind { F32, F16, BF16 };
template <WKind K> struct WElem { using type = uint16_t; };
template <> struct WElem<WKind::F32> { using type = float; };

/// One weight element widened to f32 (tails and portable paths).
template <WKind K> inline float widenOne(const typename WElem<K>::type *p) {
  if constexpr (K == WKind::F32)
    return *p;
  else if constexpr (K == WKind::BF16)
    return bf16ToFloat(*p);
  else
    return halfToFloat(*p);
}

/// How far ahead the "nk16" kernels prefetch in a panel streamed whole: 8
/// chunk steps of a full panel (16 rows x 64 bytes each), i.e. each row 8
/// cache lines on.
constexpr int64_t kNk16PrefetchBytes = 8 * kNk16PanelRows * kNk16ChunkBytes;

/// Whether the AVX-512 "nk" tile of x rows starting at m0 prefetches the
/// next block of row-major weight rows (`blockBytes` each) while it reads
/// this one. The first tile always does. The later tiles re-read this
/// block from L1, and fetching the next one from each of them is harmless
/// only while both blocks sit well inside L1: at K = 1536 (SmolLM2's
/// down_proj, 24 KiB blocks) it pulled the next block over this one's
/// rows (prefill, one thread: 346 -> 272 ms without). The AVX2 kernels
/// keep fetching from every tile: there the change measured 3% slower.
inline bool nkFetchNext(int64_t m0, int64_t blockBytes) {
  return m0 == 0 || blockBytes <= 16 * 1024;
}

/// Prefetches the cache line at `base` + `bytes` into L1. The address may lie
/// past the weights (a prefetch never faults), hence integer arithmetic
/// rather than an out-of-range pointer.
inline void prefetchAt(const void *base, int64_t bytes) {
  _mm_prefetch(reinterpret_cast<const char *>(
                   reinterpret_cast<uintptr_t>(base) + uintptr_t(bytes)),
               _MM_HINT_T0);
}

/// Where the "nk" kernels read a block of weight rows starting at row n:
/// row j of the block, column kk at at(j, kk). With row-major weights that
/// is w + (n + j) * k + kk. With "nk16" the block must lie in one panel;
/// a vector step at kk (a multiple of the step, which divides the chunk)
/// then stays inside one chunk or inside the row's contiguous K tail, so
/// the kernels compute the same sums from other addresses.
template <typename E, bool Packed> struct NkRows {
  static constexpr int64_t kChunk = nk16Chunk(sizeof(E));
  const E *first = nullptr; // row n (row-major) or its panel (nk16)
  int64_t k = 0;
  // nk16: row n's index in its panel, the panel's rows, and the columns
  // held in whole chunks (the rest is each row's contiguous tail).
  int64_t rowOff = 0, rows = 0, full = 0;

  NkRows(const void *w, int64_t n, int64_t nTotal, int64_t kk) : k(kk) {
    if constexpr (!Packed) {
      first = static_cast<const E *>(w) + n * k;
    } else {
      const int64_t p0 = n / kNk16PanelRows * kNk16PanelRows;
      first = static_cast<const E *>(w) + p0 * k;
      rowOff = n - p0;
      rows = std::min(kNk16PanelRows, nTotal - p0);
      full = k / kChunk * kChunk;
    }
  }
  /// Row 0's element kk; row j's is j * stride(kk) further.
  const E *base(int64_t kk) const {
    if constexpr (!Packed)
      return first + kk;
    else if (kk < full)
      return first + kk / kChunk * rows * kChunk + rowOff * kChunk +
             kk % kChunk;
    else
      return first + full * rows + rowOff * (k - full) + (kk - full);
  }
  int64_t stride(int64_t kk) const {
    if constexpr (!Packed)
      return k;
    else
      return kk < full ? kChunk : k - full;
  }
  const E *at(int64_t j, int64_t kk) const { return base(kk) + j * stride(kk); }
  /// "nk16": how far ahead a block of nb rows prefetches. A whole panel
  /// is one stream: a fixed distance on in it. A part of a panel: the same
  /// rows of the next panel (one panel on), as the row-major kernels fetch
  /// the next block, so that each block keeps memory busy for the next.
  int64_t aheadBytes(int64_t nb) const {
    return rowOff == 0 && nb >= rows ? kNk16PrefetchBytes
                                     : rows * k * int64_t(sizeof(E));
  }
};

/// Copies the "nk16" panel at `panel` (`rows` rows of k values) into
/// row-major rows at `out`, reading the panel in its stored order.
template <typename E>
inline void unpackNk16Panel(const E *panel, int64_t rows, int64_t k, E *out) {
  constexpr int64_t kChunk = nk16Chunk(sizeof(E));
  const int64_t full = k / kChunk * kChunk;
  const E *p = panel;
  for (int64_t c = 0; c < full; c += kChunk)
    for (int64_t r = 0; r < rows; ++r, p += kChunk) {
      prefetchAt(p, kNk16PrefetchBytes);
      std::memcpy(out + r * k + c, p, sizeof(E) * kChunk);
    }
  for (int64_t r = 0; r < rows; ++r, p += k - full)
    std::memcpy(out + r * k + full, p, sizeof(E) * size_t(k - full));
}

/// Rows [n, end) of an "nk" weight split at "nk16" panel boundaries (or
/// not, row-major): calls fn(lo, hi) for each piece.
template <bool Packed, typename Fn>
inline void forEachPanelPiece(int64_t n, int64_t end, Fn &&fn) {
  while (n < end) {
    const int64_t hi =
        Packed ? std::min(end, (n / kNk16PanelRows + 1) * kNk16PanelRows) : end;
    fn(n, hi);
    n = hi;
  }
}

/// For the bf16 kernels: copies the m x k rows of x with every full run of
/// `run` values reordered as its even-index values then its odd-index ones
/// (the order in which a shift and a mask widen packed bf16 pairs); values
/// past the last full run are left unset.
inline void splitPairs(const float *x, int64_t m, int64_t k, int64_t run,
                       float *out) {
  const int64_t half = run / 2, end = k / run * run;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < end; c += run)
      for (int64_t i = 0; i < half; ++i) {
        out[r * k + c + i] = x[r * k + c + 2 * i];
        out[r * k + c + half + i] = x[r * k + c + 2 * i + 1];
      }
}

/// The "kn" kernels accumulate a chunk of columns for all m rows in this
/// many f32 values (16 KiB, in L1). Fewer rows allow wider chunks, i.e.
/// longer contiguous runs of each weight row.
constexpr int64_t kLinearKnAccFloats = 4096;
/// Widest column chunk for m rows: a multiple of 64 (whole cache lines).
inline int64_t linearKnMaxWidth(int64_t m) {
  const int64_t w = kLinearKnAccFloats / (m > 0 ? m : 1) / 64 * 64;
  return w < 64 ? 64 : w;
}

} // namespace ingot::cpu
