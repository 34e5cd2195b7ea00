//===- WeightLayout.cpp - Packing weights into the kernels' layouts -------===//
#include "ingot/WeightLayout.h"

#include "ingot/Quant.h"

#include <cstring>

namespace ingot {

bool isKnownWeightLayout(const std::string &layout) {
  return layout == "row-major" || layout == "nk16" || layout == "q16";
}

Status packWeight(const std::string &layout, const void *src, int64_t n,
                  int64_t k, size_t elemBytes, void *dst) {
  if (layout == "row-major") {
    std::memcpy(dst, src, size_t(n * k) * elemBytes);
    return Status::ok();
  }
  if (layout != "nk16")
    return Status::error("unknown weight layout '" + layout +
                         "'; known: row-major, nk16");
  const auto *in = static_cast<const uint8_t *>(src);
  auto *out = static_cast<uint8_t *>(dst);
  // Runs of a row stay contiguous in both layouts: copy each chunk whole.
  if (elemBytes == 0 || kNk16ChunkBytes % int64_t(elemBytes) != 0)
    return Status::error("nk16 needs 1, 2, 4 or 8-byte elements, got " +
                         std::to_string(elemBytes));
  const int64_t chunk = nk16Chunk(elemBytes), full = k / chunk * chunk;
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t c = 0; c < full; c += chunk)
      std::memcpy(out + size_t(nk16Index(row, c, n, k, elemBytes)) * elemBytes,
                  in + size_t(row * k + c) * elemBytes,
                  size_t(chunk) * elemBytes);
    if (full < k)
      std::memcpy(out +
                      size_t(nk16Index(row, full, n, k, elemBytes)) * elemBytes,
                  in + size_t(row * k + full) * elemBytes,
                  size_t(k - full) * elemBytes);
  }
  return Status::ok();
}

namespace {

/// Stored value v (0..g-1) of a row-major g-value block's payload as
/// "q16" holds it: a q8 value + 128 (its byte with the sign bit flipped),
/// a q4/q4m nibble as it is.
uint8_t blockValue(DType t, const uint8_t *payload, int64_t v) {
  if (t == DType::Q8)
    return payload[v] ^ 0x80u;
  return v < 16 ? payload[v] & 0x0f : payload[v - 16] >> 4;
}

/// Where value v of panel row r lands in a "q16" block's payload: byte
/// index and nibble shift (0 for q8).
void q16Place(DType t, int64_t r, int64_t v, int64_t *byte, int *shift) {
  if (t == DType::Q8) {
    *byte = (v / 4) * 64 + 4 * r + v % 4;
    *shift = 0;
    return;
  }
  const int64_t within = v % 8;
  *byte = (v / 8) * 64 + 4 * r + within % 4;
  *shift = within >= 4 ? 4 : 0;
}

} // namespace

std::string q16Unsupported(DType t, int64_t n, int64_t k, int64_t group) {
  if (t != DType::Q8 && t != DType::Q4 && t != DType::Q4M)
    return std::string("q16 holds q8, q4 or q4m, not ") + dtypeName(t);
  // A q8 row in one group is one long block: the same chunks, one d.
  if (group != kQ16Block && !(t == DType::Q8 && group == k))
    return "q16 needs groups of 32 (or, for q8, one group per row), got " +
           std::to_string(group);
  if (n <= 0 || n % kQ16PanelRows)
    return "q16 needs a positive multiple of 16 rows, got " + std::to_string(n);
  if (k <= 0 || k % kQ16Block)
    return "q16 needs a positive multiple of 32 columns, got " +
           std::to_string(k);
  return "";
}

Status packQ16(DType t, const void *src, int64_t n, int64_t k, int64_t group,
               void *dst) {
  if (std::string why = q16Unsupported(t, n, k, group); !why.empty())
    return Status::error(why);
  const int64_t blockBytes = quantBlockBytes(t, group);
  const int64_t hdr = quantHeaderBytes(t), blocks = k / group;
  const auto *in = static_cast<const uint8_t *>(src);
  auto *out = static_cast<uint8_t *>(dst);
  std::memset(out, 0, size_t(n * blocks * blockBytes));
  for (int64_t row = 0; row < n; ++row) {
    const int64_t r = row % kQ16PanelRows, p0 = row - r;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t *blk = in + (row * blocks + b) * blockBytes;
      uint8_t *o = out + (p0 * blocks + b * kQ16PanelRows) * blockBytes;
      std::memcpy(o + 2 * r, blk, 2);
      if (t == DType::Q4M)
        std::memcpy(o + 32 + 2 * r, blk + 2, 2);
      uint8_t *payload = o + kQ16PanelRows * hdr;
      for (int64_t v = 0; v < group; ++v) {
        int64_t at;
        int shift;
        q16Place(t, r, v, &at, &shift);
        payload[at] |= uint8_t(blockValue(t, blk + hdr, v) << shift);
      }
    }
  }
  return Status::ok();
}

void unpackQ16Row(DType t, const void *src, int64_t k, int64_t group,
                  int64_t row, void *dst) {
  const int64_t blockBytes = quantBlockBytes(t, group);
  const int64_t hdr = quantHeaderBytes(t), blocks = k / group;
  const int64_t r = row % kQ16PanelRows, p0 = row - r;
  const auto *in = static_cast<const uint8_t *>(src);
  auto *out = static_cast<uint8_t *>(dst);
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t *o = in + (p0 * blocks + b * kQ16PanelRows) * blockBytes;
    uint8_t *blk = out + b * blockBytes;
    std::memcpy(blk, o + 2 * r, 2);
    if (t == DType::Q4M)
      std::memcpy(blk + 2, o + 32 + 2 * r, 2);
    const uint8_t *payload = o + kQ16PanelRows * hdr;
    uint8_t *values = blk + hdr;
    if (t != DType::Q8)
      std::memset(values, 0, 16);
    for (int64_t v = 0; v < group; ++v) {
      int64_t at;
      int shift;
      q16Place(t, r, v, &at, &shift);
      const uint8_t q =
          t == DType::Q8 ? payload[at] ^ 0x80u : (payload[at] >> shift) & 0x0f;
      if (t == DType::Q8)
        values[v] = q;
      else
        values[v % 16] |= uint8_t(q << (v < 16 ? 0 : 4));
    }
  }
}

Status checkWeightLayout(const std::string &layout, DType t,
                         const std::vector<int64_t> &shape, int64_t group) {
  if (layout.empty() || layout == "row-major")
    return Status::ok();
  if (!isKnownWeightLayout(layout))
    return Status::error("unknown weight layout \"" + layout +
                         "\"; known: row-major, nk16, q16");
  if (shape.size() != 2)
    return Status::error("layout " + layout + " needs a 2-D tensor");
  if (layout == "nk16")
    return isQuantDType(t) ? Status::error("layout nk16 holds plain "
                                           "elements, not " +
                                           std::string(dtypeName(t)))
                           : Status::ok();
  if (std::string why = q16Unsupported(t, shape[0], shape[1], group);
      !why.empty())
    return Status::error(why);
  return Status::ok();
}

} // namespace ingot
