//===- Checksum.cpp - Fast 64-bit checksum --------------------------------===//
#include "Checksum.h"

#include <bit>
#include <cstring>

namespace ingot {
namespace {

// Odd multipliers (odd => multiplication is invertible mod 2^64), chosen with
// well-spread bits. kGolden is 2^64 / phi.
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kMulA = 0xd6e8feb86659fd93ull;
constexpr uint64_t kMulB = 0xa0761d6478bd642full;
constexpr uint64_t kMulC = 0xe7037ed1a0b428dbull;

inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big)
    v = __builtin_bswap64(v);
  return v;
}

// Bijective in both `acc` and `word`.
inline uint64_t round64(uint64_t acc, uint64_t word) {
  acc += word * kMulA;
  acc = std::rotl(acc, 31);
  return acc * kGolden;
}

inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kMulB;
  h ^= h >> 29;
  h *= kMulC;
  h ^= h >> 32;
  return h;
}

inline void processBlocks(uint64_t lanes[4], const uint8_t *p, size_t blocks) {
  uint64_t a = lanes[0], b = lanes[1], c = lanes[2], d = lanes[3];
  for (size_t i = 0; i < blocks; ++i, p += 32) {
    a = round64(a, load64(p));
    b = round64(b, load64(p + 8));
    c = round64(c, load64(p + 16));
    d = round64(d, load64(p + 24));
  }
  lanes[0] = a, lanes[1] = b, lanes[2] = c, lanes[3] = d;
}

} // namespace

Checksum64::Checksum64() {
  lanes_[0] = kGolden;
  lanes_[1] = kMulA;
  lanes_[2] = kMulB;
  lanes_[3] = kMulC;
}

void Checksum64::update(const void *data, size_t size) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  totalSize_ += size;
  if (pendingSize_) {
    size_t take = kBlock - pendingSize_;
    if (take > size)
      take = size;
    std::memcpy(pending_ + pendingSize_, p, take);
    pendingSize_ += take;
    p += take;
    size -= take;
    if (pendingSize_ < kBlock)
      return;
    processBlocks(lanes_, pending_, 1);
    pendingSize_ = 0;
  }
  size_t blocks = size / kBlock;
  processBlocks(lanes_, p, blocks);
  p += blocks * kBlock;
  size -= blocks * kBlock;
  if (size) // memcpy from a null pointer is undefined even for 0 bytes
    std::memcpy(pending_, p, size);
  pendingSize_ = size;
}

uint64_t Checksum64::finish() const {
  // Each fold is bijective in the lane it absorbs, so a difference in any
  // one lane survives to the result.
  uint64_t h = totalSize_ * kMulC ^ kGolden;
  for (uint64_t lane : lanes_)
    h = std::rotl(h ^ avalanche(lane), 27) * kMulA + kMulB;
  const uint8_t *p = pending_;
  size_t rest = pendingSize_;
  for (; rest >= 8; rest -= 8, p += 8)
    h = round64(h, load64(p)) + kMulC;
  if (rest) {
    uint64_t word = 0;
    for (size_t i = 0; i < rest; ++i)
      word |= uint64_t(p[i]) << (8 * i);
    h = round64(h, word) + kMulC;
  }
  return avalanche(h);
}

uint64_t checksum64(const void *data, size_t size) {
  Checksum64 c;
  c.update(data, size);
  return c.finish();
}

} // namespace ingot
