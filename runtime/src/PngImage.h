//===- PngImage.h - An RGB image written as a PNG file ----------*- C++ -*-===//
#pragma once

#include "ingot/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::plot {

/// 8-bit RGB pixels, row-major, top row first.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels; // width * height * 3
};

/// CRC-32 (ISO-HDLC, as PNG chunks use) of `size` bytes, continuing `crc`.
uint32_t crc32(const uint8_t *data, size_t size, uint32_t crc = 0);

/// The PNG bytes of `image`: signature, IHDR, one IDAT holding a zlib
/// stream of stored (uncompressed) deflate blocks, IEND.
std::vector<uint8_t> encodePng(const RgbImage &image);

/// Writes encodePng(image) to `path` through a temp file in the same
/// folder and a rename, so a reader never sees half an image.
Status writePng(const std::string &path, const RgbImage &image);

} // namespace ingot::plot
