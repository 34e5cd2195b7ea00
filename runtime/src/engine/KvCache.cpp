//===- KvCache.cpp - Paged KV-cache storage and block allocation ----------===//
//
// The storage is one anonymous mapping: page aligned (so every per-layer
// array, padded to 64 bytes, is 64-B aligned), zero-filled, and committed
// page by page as blocks are first written, so a large cache costs nothing
// until it is used.
//
//===----------------------------------------------------------------------===//

#include "ingot/KvCache.h"

#include "exec/PhysicalMemory.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <sys/mman.h>
#include <utility>

namespace ingot {
namespace {

constexpr uint64_t kAlign = 64;

unsigned __int128 padded(unsigned __int128 bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

/// Bytes of one K (or V) array of one layer — for 8-bit caches the values,
/// then the row scales, each padded to kAlign; 0 when the geometry is
/// invalid or the size does not fit in 64 bits.
uint64_t arrayBytes(const LlmConfig &c, int64_t numBlocks) {
  if (numBlocks <= 0 || c.blockSize <= 0 || c.numKvHeads <= 0 ||
      c.headDim <= 0 || !supportedKvDtype(c.kvDtype))
    return 0;
  const unsigned __int128 rows = (unsigned __int128)uint64_t(numBlocks) *
                                 uint64_t(c.blockSize) * uint64_t(c.numKvHeads);
  const unsigned __int128 values = rows * uint64_t(c.headDim);
  unsigned __int128 b = c.kvDtype == DType::F32 ? padded(values * sizeof(float))
                        : c.kvDtype == DType::BF16
                            ? padded(values * sizeof(uint16_t))
                            : padded(values) + padded(rows * sizeof(float));
  if (b > std::numeric_limits<uint64_t>::max())
    return 0;
  return uint64_t(b);
}

/// Offset of the scales within an 8-bit array.
uint64_t scalesOffset(const LlmConfig &c, int64_t numBlocks) {
  return uint64_t(padded((unsigned __int128)uint64_t(numBlocks) *
                         uint64_t(c.blockSize) * uint64_t(c.numKvHeads) *
                         uint64_t(c.headDim)));
}

} // namespace

uint64_t KvCacheStorage::bytesFor(const LlmConfig &config, int64_t numBlocks) {
  const uint64_t one = arrayBytes(config, numBlocks);
  if (!one || config.numLayers <= 0)
    return 0;
  unsigned __int128 total =
      (unsigned __int128)one * 2 * uint64_t(config.numLayers);
  if (total > std::numeric_limits<uint64_t>::max())
    return std::numeric_limits<uint64_t>::max();
  return uint64_t(total);
}

uint64_t KvCacheStorage::bytesPerBlock(const LlmConfig &c) {
  if (c.numLayers <= 0 || c.blockSize <= 0 || c.numKvHeads <= 0 ||
      c.headDim <= 0 || !supportedKvDtype(c.kvDtype))
    return 0;
  return 2 * uint64_t(c.numLayers) * uint64_t(c.blockSize) *
         uint64_t(c.numKvHeads) * kvRowBytes(c.kvDtype, c.headDim);
}

KvCacheStorage::~KvCacheStorage() {
  if (memory_)
    munmap(memory_, bytes_);
}

Status KvCacheStorage::allocate(const LlmConfig &config, int64_t numBlocks,
                                bool prefault) {
  if (memory_) {
    munmap(memory_, bytes_);
    memory_ = nullptr;
    bytes_ = 0;
    view_ = KvCacheView();
  }
  if (!supportedKvDtype(config.kvDtype))
    return Status::error(std::string("KV cache dtype ") +
                         dtypeName(config.kvDtype) +
                         " is not supported (float32, bfloat16, int8 or fp8 "
                         "e4m3)");
  KvLayout layout;
  if (!parseKvLayout(config.kvLayout, &layout))
    return Status::error(
        "KV cache layout '" + config.kvLayout +
        "' is not known to this runtime (known: " + knownKvLayouts() + ")");
  if (config.numLayers <= 0 || config.blockSize <= 0 ||
      config.numKvHeads <= 0 || config.headDim <= 0 || numBlocks <= 0)
    return Status::error("invalid KV cache geometry: layers " +
                         std::to_string(config.numLayers) + ", blocks " +
                         std::to_string(numBlocks) + ", block size " +
                         std::to_string(config.blockSize) + ", KV heads " +
                         std::to_string(config.numKvHeads) + ", head dim " +
                         std::to_string(config.headDim) +
                         " (all must be positive)");
  const uint64_t one = arrayBytes(config, numBlocks);
  const uint64_t total = bytesFor(config, numBlocks);
  if (!one || total == std::numeric_limits<uint64_t>::max() ||
      total > uint64_t(std::numeric_limits<size_t>::max()))
    return Status::error("KV cache of " + std::to_string(numBlocks) +
                         " blocks does not fit in the address space");
  // Mapped lazily, a budget beyond the machine would be OOM-killed mid-run.
  if (const uint64_t ram = physicalMemoryBytes(); total > ram)
    return Status::error(
        "KV cache of " + std::to_string(numBlocks) + " blocks needs " +
        std::to_string(total) + " bytes (" + formatBytes(total) +
        "), more than this machine's " + formatBytes(ram) +
        " of physical memory; lower the KV budget (--kv-blocks or "
        "--kv-cache-mb)");
  void *p = mmap(nullptr, size_t(total), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS |
                     (prefault ? MAP_POPULATE : MAP_NORESERVE),
                 -1, 0);
  if (p == MAP_FAILED)
    return Status::error("cannot allocate the KV cache of " +
                         std::to_string(total) + " bytes (" +
                         std::to_string(numBlocks) +
                         " blocks): " + std::strerror(errno));
  memory_ = p;
  bytes_ = total;
  view_.numLayers = config.numLayers;
  view_.numBlocks = numBlocks;
  view_.blockSize = config.blockSize;
  view_.numKvHeads = config.numKvHeads;
  view_.headDim = config.headDim;
  view_.layout = layout;
  view_.dtype = config.kvDtype;
  auto *base = static_cast<uint8_t *>(p);
  const bool f32 = config.kvDtype == DType::F32;
  const bool bf16 = config.kvDtype == DType::BF16;
  const uint64_t scales = f32 || bf16 ? 0 : scalesOffset(config, numBlocks);
  for (int64_t l = 0; l < config.numLayers; ++l) {
    uint8_t *k = base + (2 * l) * one, *v = base + (2 * l + 1) * one;
    if (f32) {
      view_.keys.push_back(reinterpret_cast<float *>(k));
      view_.values.push_back(reinterpret_cast<float *>(v));
      continue;
    }
    if (bf16) {
      view_.keys16.push_back(reinterpret_cast<uint16_t *>(k));
      view_.values16.push_back(reinterpret_cast<uint16_t *>(v));
      continue;
    }
    view_.keys8.push_back(k);
    view_.values8.push_back(v);
    view_.keyScales.push_back(reinterpret_cast<float *>(k + scales));
    view_.valueScales.push_back(reinterpret_cast<float *>(v + scales));
  }
  return Status::ok();
}

KvBlockAllocator::KvBlockAllocator(int64_t numBlocks)
    : refs_(size_t(numBlocks > 0 ? numBlocks : 0), 0) {
  // Pushed in reverse so that a fresh allocator hands out 0, 1, 2, ...
  free_.reserve(refs_.size());
  for (int64_t b = int64_t(refs_.size()); b-- > 0;)
    free_.push_back(b);
}

int64_t KvBlockAllocator::allocate() {
  if (free_.empty())
    return -1;
  const int64_t b = free_.back();
  free_.pop_back();
  refs_[b] = 1;
  return b;
}

// A retain/release of a block nobody holds (or an id out of range) is an
// engine bug. Changing the counts would hand the block out twice or leak
// it, so it is ignored; debug builds stop at the assert to expose the bug.
void KvBlockAllocator::retain(int64_t block) {
  const bool held = block >= 0 && block < numBlocks() && refs_[block] > 0 &&
                    refs_[block] < std::numeric_limits<int32_t>::max();
  assert(held && "KvBlockAllocator::retain of a free or invalid block");
  if (held)
    ++refs_[block];
}

void KvBlockAllocator::release(int64_t block) {
  const bool held = block >= 0 && block < numBlocks() && refs_[block] > 0;
  assert(held && "KvBlockAllocator::release of a free or invalid block");
  if (held && --refs_[block] == 0)
    free_.push_back(block);
}

} // namespace ingot
