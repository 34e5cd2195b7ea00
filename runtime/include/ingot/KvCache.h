//===- KvCache.h - Paged KV-cache storage and block allocation --*- C++ -*-===//
//
// The cache is a pool of fixed-size blocks. Each layer has a K and a V array
// in one of two layouts, chosen by the compiler per target and recorded in
// the manifest (LlmConfig::kvLayout):
//   "block,token,head,dim"  [numBlocks, blockSize, numKvHeads, headDim]
//   "block,head,token,dim"  [numBlocks, numKvHeads, blockSize, headDim]
// The second keeps one KV head's rows of a block contiguous, so attention
// streams them as one run. A token of a sequence lives in slot
// block * blockSize + offset, found through the sequence's block table.
// Kernels see the storage through KvCacheView; the engine owns the storage
// and the allocator.
//
// Element types (LlmConfig::kvDtype): float32; bfloat16 (each value
// rounded to nearest even, no scale: half the bytes, f32's range, 8
// significant bits); or 8 bits per value — int8
// (symmetric, q = round(x / s), s = max|x| / 127) or fp8 e4m3 (x / s with
// s = max|x| / 448) — with one f32 scale per row, i.e. per token and KV
// head. A bfloat16 or 8-bit element sits at the same element offset as its f32
// counterpart would, and the scale of the row starting at element offset o
// is scales[o / headDim] (a row is headDim contiguous values in both
// layouts). Per-row scales keep one outlier token from costing the others
// their precision, and a row is written once, so it never needs rescaling.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/KvLayout.h"
#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ingot {

/// What a kernel needs to address the cache of one artifact.
struct KvCacheView {
  int64_t numLayers = 0;
  int64_t numBlocks = 0;
  int64_t blockSize = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0;
  KvLayout layout = KvLayout::BlockTokenHeadDim;
  DType dtype = DType::F32;
  std::vector<float *> keys;   // per layer (float32 caches)
  std::vector<float *> values; // per layer (float32 caches)
  // 8-bit caches: per layer, the values (one byte each) and the row scales.
  std::vector<uint8_t *> keys8, values8;
  std::vector<float *> keyScales, valueScales;
  // bfloat16 caches: per layer, the values (two bytes each).
  std::vector<uint16_t *> keys16, values16;

  int64_t slotFloats() const { return numKvHeads * headDim; }
  int64_t numSlots() const { return numBlocks * blockSize; }

  // Addressing, in floats from the start of a layer's array: the rows of
  // KV head `kvh` in block `block` start at headBase(block, kvh), and the
  // row of the token at offset `o` in the block is `o * rowStride()` past
  // it. Both layouts are block * blockFloats + kvh * headStride
  // + o * rowStride; only the two strides differ.
  int64_t blockFloats() const { return blockSize * numKvHeads * headDim; }
  int64_t headStride() const {
    return layout == KvLayout::BlockHeadTokenDim ? blockSize * headDim
                                                 : headDim;
  }
  int64_t rowStride() const {
    return layout == KvLayout::BlockHeadTokenDim ? headDim
                                                 : numKvHeads * headDim;
  }
  int64_t headBase(int64_t block, int64_t kvh) const {
    return block * blockFloats() + kvh * headStride();
  }
  /// KV head `kvh`'s row of cache slot `slot` (block * blockSize + offset).
  int64_t rowOffset(int64_t slot, int64_t kvh) const {
    return headBase(slot / blockSize, kvh) + slot % blockSize * rowStride();
  }
};

/// Owns the K/V arrays of every layer (one allocation, 64-B aligned).
class KvCacheStorage {
public:
  KvCacheStorage() = default;
  ~KvCacheStorage();
  KvCacheStorage(const KvCacheStorage &) = delete;
  KvCacheStorage &operator=(const KvCacheStorage &) = delete;

  /// Bytes `numBlocks` blocks take for this model.
  static uint64_t bytesFor(const LlmConfig &config, int64_t numBlocks);
  /// What one more block costs, without the per-array alignment padding
  /// (budgets in MiB divide by this); 0 for an invalid geometry.
  static uint64_t bytesPerBlock(const LlmConfig &config);
  /// Zero-filled arrays in `config.kvLayout` of `config.kvDtype`; an
  /// unknown layout or dtype is an error.
  /// With `prefault`, every page is committed now (resident memory is the
  /// whole budget from the start, and a budget the machine cannot hold
  /// fails here rather than hours later); otherwise pages are committed
  /// as blocks are first written.
  Status allocate(const LlmConfig &config, int64_t numBlocks,
                  bool prefault = false);
  const KvCacheView &view() const { return view_; }
  uint64_t bytes() const { return bytes_; }

private:
  void *memory_ = nullptr;
  uint64_t bytes_ = 0;
  KvCacheView view_;
};

/// Hands out block ids with reference counts (shared prefixes hold a block
/// more than once). Never fails silently: allocation reports exhaustion.
class KvBlockAllocator {
public:
  explicit KvBlockAllocator(int64_t numBlocks);
  int64_t numBlocks() const { return static_cast<int64_t>(refs_.size()); }
  int64_t numFree() const { return static_cast<int64_t>(free_.size()); }
  int64_t numUsed() const { return numBlocks() - numFree(); }
  /// A fresh block with reference count 1, or -1 when none is free.
  int64_t allocate();
  void retain(int64_t block);
  /// Drops one reference; the block is free again at zero.
  void release(int64_t block);
  int64_t refCount(int64_t block) const { return refs_[block]; }

private:
  std::vector<int32_t> refs_;
  std::vector<int64_t> free_; // a stack: recently freed blocks reused first
};

} // namespace ingot
