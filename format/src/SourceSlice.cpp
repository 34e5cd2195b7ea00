//===- SourceSlice.cpp - A weight made from one source tensor -------------===//
#include "ingot/SourceSlice.h"

#include "ingot/NonFiniteScan.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>

namespace ingot {
namespace {

/// Rows of a column slice are read this many bytes at a time.
constexpr uint64_t kChunkBytes = 4u << 20;

/// Bytes of the whole stored tensor (its shape was checked against its
/// data offsets when its file was opened, so this does not overflow).
uint64_t storedBytes(const StoredTensor &t) {
  uint64_t n = t.elementSize;
  for (int64_t d : t.shape)
    n *= uint64_t(d);
  return n;
}

bool parseInt(const std::string &text, int64_t *out) {
  const char *end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && p == end;
}

/// 1 + each value, widened to f32 first as transformers' Gemma norms do.
std::vector<float> plusOne(const StoredTensor &t,
                           const std::vector<uint8_t> &raw) {
  const size_t n = raw.size() / t.elementSize;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    float v;
    uint16_t h;
    if (t.dtype == DType::F32) {
      std::memcpy(&v, raw.data() + 4 * i, 4);
    } else {
      std::memcpy(&h, raw.data() + 2 * i, 2);
      v = t.dtype == DType::F16 ? f16BitsToFloat(h)
                                : std::bit_cast<float>(uint32_t(h) << 16);
    }
    out[i] = 1.0f + v;
  }
  return out;
}

/// Columns [begin, end) of every row of a 2-D tensor: whole rows are read
/// a chunk at a time and each row's range handed on.
Status readColumns(const StoredTensor &t, int64_t begin, int64_t end,
                   const StoredReader &read, const ByteSink &sink) {
  const uint64_t rows = uint64_t(t.shape[0]);
  const uint64_t rowBytes = uint64_t(t.shape[1]) * t.elementSize;
  const uint64_t skip = uint64_t(begin) * t.elementSize;
  const uint64_t take = uint64_t(end - begin) * t.elementSize;
  if (rows == 0 || take == 0)
    return Status::ok();
  const uint64_t perChunk = std::max<uint64_t>(1, kChunkBytes / rowBytes);
  std::vector<uint8_t> buffer;
  for (uint64_t row = 0; row < rows; row += perChunk) {
    const uint64_t n = std::min(perChunk, rows - row);
    buffer.clear();
    if (Status s = read(row * rowBytes, n * rowBytes,
                        [&](const void *p, size_t size) {
                          auto *c = static_cast<const uint8_t *>(p);
                          buffer.insert(buffer.end(), c, c + size);
                        });
        !s)
      return s;
    if (buffer.size() != n * rowBytes)
      return Status::error(t.file + ": short read of " +
                           std::to_string(buffer.size()) + " bytes");
    for (uint64_t r = 0; r < n; ++r)
      sink(buffer.data() + r * rowBytes + skip, take);
  }
  return Status::ok();
}

} // namespace

Status parseSourcePart(const std::string &name, SourcePart *out) {
  const size_t hash = name.find('#');
  SourcePart p;
  p.key = name.substr(0, hash);
  if (p.key.empty())
    return Status::error("weight part '" + name + "' names no tensor");
  if (hash == std::string::npos) {
    *out = std::move(p);
    return Status::ok();
  }
  const std::string suffix = name.substr(hash + 1);
  if (suffix == "plus1") {
    p.kind = SourcePart::Kind::PlusOne;
    *out = std::move(p);
    return Status::ok();
  }
  const size_t eq = suffix.find('='), colon = suffix.find(':');
  const std::string kind = suffix.substr(0, eq);
  const bool parsed =
      eq != std::string::npos && colon != std::string::npos && colon > eq &&
      parseInt(suffix.substr(eq + 1, colon - eq - 1), &p.begin) &&
      parseInt(suffix.substr(colon + 1), &p.end);
  if ((kind != "rows" && kind != "cols") || !parsed || p.begin < 0 ||
      p.begin >= p.end)
    return Status::error("weight part '" + name + "': bad slice suffix '#" +
                         suffix + "' — expected #plus1, #rows=A:B or " +
                         "#cols=A:B with 0 <= A < B");
  p.kind = kind == "rows" ? SourcePart::Kind::Rows : SourcePart::Kind::Cols;
  *out = std::move(p);
  return Status::ok();
}

Status produceSourcePart(const StoredTensor &t, const SourcePart &part,
                         const std::string &name, const StoredReader &read,
                         const ByteSink &sink) {
  auto bad = [&](const std::string &why) {
    return Status::error(t.file + ": weight '" + name + "': " + why +
                         " (tensor '" + part.key + "' is " +
                         shapeText(t.shape) + ")");
  };
  const std::string range =
      std::to_string(part.begin) + ":" + std::to_string(part.end);
  // Every value passes through the scan on its way to the sink; `index`
  // turns the index of a streamed element into its index in the tensor.
  NonFiniteScan scan(t.dtype.value_or(DType::I64));
  auto scanned = [&](const void *p, size_t n) {
    scan.scan(p, n);
    sink(p, n);
  };
  auto finish = [&](Status s, auto index) {
    if (s && scan.found())
      return nonFiniteError(t.file, part.key, index(scan.firstIndex()),
                            scan.firstIsNaN());
    return s;
  };
  switch (part.kind) {
  case SourcePart::Kind::Whole:
    return finish(read(0, storedBytes(t), scanned),
                  [](uint64_t i) { return i; });
  case SourcePart::Kind::PlusOne: {
    if (t.dtype != DType::F32 && t.dtype != DType::F16 &&
        t.dtype != DType::BF16)
      return bad("#plus1 needs F32, F16 or BF16 values, not " + t.dtypeName);
    std::vector<uint8_t> raw;
    Status s = read(0, storedBytes(t), [&](const void *p, size_t n) {
      scan.scan(p, n);
      auto *c = static_cast<const uint8_t *>(p);
      raw.insert(raw.end(), c, c + n);
    });
    if (Status e = finish(s, [](uint64_t i) { return i; }); !e)
      return e;
    std::vector<float> out = plusOne(t, raw);
    sink(out.data(), out.size() * sizeof(float));
    return Status::ok();
  }
  case SourcePart::Kind::Rows: {
    if (t.shape.empty() || t.shape.size() > 2 || part.end > t.shape[0])
      return bad("rows " + range + " are out of range");
    // A row of a 2-D tensor is its column count; of a 1-D one, an element.
    const uint64_t rowElems = t.shape.size() == 2 ? uint64_t(t.shape[1]) : 1;
    const uint64_t rowBytes = t.elementSize * rowElems;
    Status s = read(uint64_t(part.begin) * rowBytes,
                    uint64_t(part.end - part.begin) * rowBytes, scanned);
    return finish(
        s, [&](uint64_t i) { return uint64_t(part.begin) * rowElems + i; });
  }
  case SourcePart::Kind::Cols: {
    if (t.shape.size() != 2 || part.end > t.shape[1])
      return bad("cols " + range + " are out of range");
    Status s = readColumns(t, part.begin, part.end, read, scanned);
    const uint64_t width = uint64_t(part.end - part.begin);
    const uint64_t cols = uint64_t(t.shape[1]);
    return finish(s, [&](uint64_t i) {
      return (i / width) * cols + uint64_t(part.begin) + i % width;
    });
  }
  }
  return bad("unknown part kind");
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

size_t safetensorsDTypeSize(const std::string &name) {
  static const std::pair<const char *, size_t> kSizes[] = {
      {"F64", 8},  {"I64", 8}, {"U64", 8},  {"F32", 4},     {"I32", 4},
      {"U32", 4},  {"F16", 2}, {"BF16", 2}, {"I16", 2},     {"U16", 2},
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  for (const auto &[n, size] : kSizes)
    if (name == n)
      return size;
  return 0;
}

} // namespace ingot
