//===- PngImage.cpp - An RGB image written as a PNG file ------------------===//
//
// No compressor: the deflate stream is a run of stored blocks (at most
// 65535 bytes each, 5 bytes of header), which every PNG reader accepts.
// Plots are small, so the files stay a few MiB at most, and the code stays
// a page long.
//
//===----------------------------------------------------------------------===//

#include "PngImage.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ingot::plot {
namespace {

const std::array<uint32_t, 256> &crcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  return table;
}

void putBe32(std::vector<uint8_t> &out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(uint8_t(v >> shift));
}

/// Appends a chunk: length, type, data, CRC of type + data.
void putChunk(std::vector<uint8_t> &out, const char type[4],
              const std::vector<uint8_t> &data) {
  putBe32(out, uint32_t(data.size()));
  const size_t typeAt = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  putBe32(out, crc32(out.data() + typeAt, 4 + data.size()));
}

/// zlib stream (RFC 1950) of `raw` in stored deflate blocks (RFC 1951).
std::vector<uint8_t> zlibStored(const std::vector<uint8_t> &raw) {
  std::vector<uint8_t> z;
  z.reserve(raw.size() + raw.size() / 65535 * 5 + 16);
  z.push_back(0x78); // deflate, 32 KiB window
  z.push_back(0x01); // no preset dictionary; (0x78 << 8 | 0x01) % 31 == 0
  size_t at = 0;
  do {
    const size_t len = std::min<size_t>(65535, raw.size() - at);
    const bool last = at + len == raw.size();
    z.push_back(last ? 1 : 0); // BFINAL, BTYPE = 00 (stored)
    z.push_back(uint8_t(len)), z.push_back(uint8_t(len >> 8));
    z.push_back(uint8_t(~len)), z.push_back(uint8_t(~len >> 8));
    z.insert(z.end(), raw.begin() + at, raw.begin() + at + len);
    at += len;
  } while (at < raw.size());
  uint32_t a = 1, b = 0; // Adler-32 of the uncompressed data
  for (uint8_t byte : raw) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  putBe32(z, b << 16 | a);
  return z;
}

} // namespace

uint32_t crc32(const uint8_t *data, size_t size, uint32_t crc) {
  const std::array<uint32_t, 256> &t = crcTable();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = t[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

std::vector<uint8_t> encodePng(const RgbImage &image) {
  static const uint8_t kSignature[8] = {0x89, 'P',  'N',  'G',
                                        '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> out(kSignature, kSignature + 8);
  std::vector<uint8_t> ihdr;
  putBe32(ihdr, uint32_t(image.width));
  putBe32(ihdr, uint32_t(image.height));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0}); // 8-bit RGB, deflate, no
                                            // filter method, no interlace
  putChunk(out, "IHDR", ihdr);
  // Each scanline: filter type 0 (none), then the row's RGB bytes.
  const size_t rowBytes = size_t(image.width) * 3;
  std::vector<uint8_t> raw;
  raw.reserve((rowBytes + 1) * size_t(image.height));
  for (int y = 0; y < image.height; ++y) {
    raw.push_back(0);
    const uint8_t *row = image.pixels.data() + size_t(y) * rowBytes;
    raw.insert(raw.end(), row, row + rowBytes);
  }
  putChunk(out, "IDAT", zlibStored(raw));
  putChunk(out, "IEND", {});
  return out;
}

Status writePng(const std::string &path, const RgbImage &image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != size_t(image.width) * size_t(image.height) * 3)
    return Status::error("cannot write " + path + ": the image is " +
                         std::to_string(image.width) + "x" +
                         std::to_string(image.height) + " with " +
                         std::to_string(image.pixels.size()) + " bytes");
  const std::vector<uint8_t> bytes = encodePng(image);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return Status::error("cannot create " + tmp + " (for " + path +
                         "): " + std::strerror(errno));
  const bool wrote =
      std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !wrote) {
    std::remove(tmp.c_str());
    return Status::error("cannot write " + tmp + " (for " + path +
                         "): " + std::strerror(wrote ? errno : err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return Status::error("cannot rename " + tmp + " to " + path + ": " +
                         std::strerror(e));
  }
  return Status::ok();
}

} // namespace ingot::plot
