//===- ChecksumTest.cpp - Checksum64 known answers, properties, speed -----===//
#include "ingot/Checksum.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <set>
#include <vector>

using namespace ingot;

namespace {

std::vector<uint8_t> randomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t &b : v)
    b = uint8_t(rng());
  return v;
}

// The function is part of the artifact format: these pin it to XXH3-64
// (the empty input's value is the one xxHash's documentation gives), so a
// change of function cannot happen without failing here.
TEST(ChecksumTest, IsXxh3) {
  EXPECT_EQ(checksum64(nullptr, 0), 0x2d06800538d394c2ull);
  EXPECT_EQ(checksum64("ingot", 5), 0xe3e98cbc0fe98ce9ull);
  std::vector<uint8_t> b(1000);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = uint8_t(i * 31 + 7);
  EXPECT_EQ(checksum64(b.data(), b.size()), 0x989765d0ea7a5ecdull);
  Checksum64 c;
  c.update(b.data(), 333);
  c.update(b.data() + 333, 667);
  EXPECT_EQ(c.finish(), 0x989765d0ea7a5ecdull);
}

TEST(ChecksumTest, ChunkingDoesNotMatter) {
  std::vector<uint8_t> data = randomBytes(10000, 1);
  std::mt19937_64 rng(2);
  for (size_t len : {0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 1000, 10000}) {
    uint64_t whole = checksum64(data.data(), len);
    for (int trial = 0; trial < 20; ++trial) {
      Checksum64 c;
      for (size_t pos = 0; pos < len;) {
        size_t n = std::min<size_t>(rng() % 70, len - pos);
        c.update(data.data() + pos, n);
        pos += n;
      }
      EXPECT_EQ(c.finish(), whole) << "len " << len;
    }
  }
}

TEST(ChecksumTest, EverySingleByteChangeIsDetected) {
  std::vector<uint8_t> data = randomBytes(300, 3);
  std::set<uint64_t> seen;
  for (size_t len = 0; len <= data.size(); ++len)
    EXPECT_TRUE(seen.insert(checksum64(data.data(), len)).second)
        << "prefix " << len;
  uint64_t base = checksum64(data.data(), data.size());
  for (size_t pos = 0; pos < data.size(); ++pos)
    for (int bit = 0; bit < 8; ++bit) {
      data[pos] ^= uint8_t(1 << bit);
      EXPECT_NE(checksum64(data.data(), data.size()), base) << pos;
      data[pos] ^= uint8_t(1 << bit);
    }
  // Zeros of different lengths differ too (padding-only sections).
  std::vector<uint8_t> zeros(100, 0);
  EXPECT_NE(checksum64(zeros.data(), 64), checksum64(zeros.data(), 65));
}

/// Seconds `fn` takes over `data`, best of a few rounds.
template <typename Fn>
double bestSeconds(const std::vector<uint8_t> &data, Fn fn, uint64_t &sink) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    auto start = std::chrono::steady_clock::now();
    sink += fn(data.data(), data.size());
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

/// The cheapest pass over every byte: a ceiling measured in the same run,
/// so a shared, loaded or sanitised machine slows both sides alike.
uint64_t sumWords(const uint8_t *p, size_t n) {
  uint64_t acc = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc += w;
  }
  return acc;
}

TEST(ChecksumTest, RunsNearTheSpeedOfReadingTheBytes) {
  std::vector<uint8_t> data = randomBytes(16 << 20, 7);
  uint64_t sink = 0;
  double hash = bestSeconds(data, checksum64, sink);
  double read = bestSeconds(data, sumWords, sink);
  std::printf("checksum64 %.1f GB/s, word sum %.1f GB/s (%llx)\n",
              data.size() / hash / 1e9, data.size() / read / 1e9,
              (unsigned long long)sink);
  // XXH3 streams at memory speed; a byte-at-a-time hash would be >10x
  // slower than the word sum. 4x leaves room for noise and instrumentation.
  EXPECT_LT(hash, 4 * read);
}

} // namespace
