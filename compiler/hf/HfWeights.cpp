//===- HfWeights.cpp - Weights of a Hugging Face directory ----------------===//
#include "compiler/hf/HfWeights.h"
#include "compiler/hf/NonFiniteScan.h"

#include "llvm/ADT/StringRef.h"

#include <bit>
#include <cstring>
#include <vector>

namespace ingot::compiler::hf {
namespace {

/// 1 + the tensor, widened to f32 first as transformers' Gemma norms do.
Status producePlusOne(const SafetensorsFile &file, const std::string &key,
                      const SafetensorsTensor &t, const ByteSink &sink) {
  std::vector<uint8_t> raw;
  if (Status s = file.read(t.begin, t.end - t.begin,
                           [&](const void *p, size_t n) {
                             auto *c = static_cast<const uint8_t *>(p);
                             raw.insert(raw.end(), c, c + n);
                           });
      !s)
    return s;
  NonFiniteScan scan(*t.dtype);
  scan.scan(raw.data(), raw.size());
  if (scan.found())
    return nonFiniteError(file.path(), key, scan.firstIndex(),
                          scan.firstIsNaN());
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
  sink(out.data(), out.size() * sizeof(float));
  return Status::ok();
}

} // namespace

Status HfWeightSource::produce(const std::string &name, const ByteSink &sink) {
  auto [keyRef, suffix] = llvm::StringRef(name).split('#');
  const std::string key = keyRef.str();
  std::optional<HfTensorStore::Entry> entry = store_->find(key);
  if (!entry)
    return Status::error(store_->indexPath() + ": no tensor '" + key +
                         "' (for weight '" + name + "')");
  const SafetensorsFile &file = *entry->file;
  const SafetensorsTensor &t = *entry->tensor;
  if (suffix == "plus1")
    return producePlusOne(file, key, t, sink);
  // Every value passes through the scan on its way to the sink; `toTensor`
  // turns the index of a streamed element into its index in the tensor.
  NonFiniteScan scan(t.dtype.value_or(DType::I64));
  auto scanned = [&](const void *p, size_t n) {
    scan.scan(p, n);
    sink(p, n);
  };
  auto finish = [&](Status s, auto toTensor) {
    if (s && scan.found())
      return nonFiniteError(file.path(), key, toTensor(scan.firstIndex()),
                            scan.firstIsNaN());
    return s;
  };
  auto same = [](uint64_t i) { return i; };
  if (suffix.empty())
    return finish(file.read(t.begin, t.end - t.begin, scanned), same);

  auto bad = [&](const std::string &why) {
    return Status::error(file.path() + ": weight '" + name + "': " + why +
                         " (tensor '" + key + "' is " + shapeString(t.shape) +
                         ")");
  };
  auto [kind, range] = suffix.split('=');
  auto [first, last] = range.split(':');
  int64_t begin, end;
  if ((kind != "rows" && kind != "cols") || first.getAsInteger(10, begin) ||
      last.getAsInteger(10, end) || begin < 0 || begin >= end)
    return bad("bad slice suffix '#" + suffix.str() +
               "' — expected #plus1, #rows=A:B or #cols=A:B with 0 <= A < B");
  uint64_t esz = t.elementSize;
  if (kind == "rows") {
    if (t.shape.empty() || t.shape.size() > 2 || end > t.shape[0])
      return bad("rows " + range.str() + " are out of range");
    // A row of a 2-D tensor is its column count; of a 1-D one, an element.
    uint64_t rowElems = t.shape.size() == 2 ? uint64_t(t.shape[1]) : 1;
    uint64_t rowBytes = esz * rowElems;
    Status s = file.read(t.begin + uint64_t(begin) * rowBytes,
                         uint64_t(end - begin) * rowBytes, scanned);
    return finish(s,
                  [&](uint64_t i) { return uint64_t(begin) * rowElems + i; });
  }
  if (t.shape.size() != 2 || end > t.shape[1])
    return bad("cols " + range.str() + " are out of range");
  Status s = file.readColumns(t, begin, end, scanned);
  const uint64_t width = uint64_t(end - begin), cols = uint64_t(t.shape[1]);
  return finish(s, [&](uint64_t i) {
    return (i / width) * cols + uint64_t(begin) + i % width;
  });
}

} // namespace ingot::compiler::hf
