//===- KvCache.h - Paged KV-cache storage and block allocation --*- C++ -*-===//
//
// The cache is a pool of fixed-size blocks. Each layer has a K and a V array
// laid out [numBlocks, blockSize, numKvHeads, headDim] (f32); a token of a
// sequence lives in slot block * blockSize + offset, found through the
// sequence's block table. Kernels see the storage through KvCacheView; the
// engine owns the storage and the allocator.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ingot {

/// What a kernel needs to address the cache of one artifact.
struct KvCacheView {
  int64_t numLayers = 0;
  int64_t numBlocks = 0;
  int64_t blockSize = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0;
  std::vector<float *> keys;   // per layer
  std::vector<float *> values; // per layer

  int64_t slotFloats() const { return numKvHeads * headDim; }
  int64_t numSlots() const { return numBlocks * blockSize; }
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
  Status allocate(const LlmConfig &config, int64_t numBlocks);
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
