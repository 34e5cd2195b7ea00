//===- Fp8Checkpoint.cpp - FP8 (e4m3) linear weights of a HF directory ----===//
//
// quant_method "fp8" checkpoints store a linear weight X.weight as
// F8_E4M3 [N, K] with a float scale the values are multiplied by:
//   X.weight_scale      [] or [1]       one scale for the tensor,
//                       [N] or [N, 1]   one per output row,
//   X.weight_scale_inv  [N/b0, K/b1]    one per block of weight_block_size
//                                       [b0, b1] (rounded up; "inv" in the
//                                       name, but it multiplies too).
// ingot's f8e4m3 format (ingot/Quant.h) holds the e4m3 bytes as they are
// with an f16 scale per group along K: the tensor, a row, or b1 features,
// so only the scale is rounded (to f16).
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/Fp8Checkpoint.h"
#include "ingot/NonFiniteScan.h"

#include "ingot/Quant.h"

#include <cstring>

namespace ingot::compiler::hf {
namespace {

Status readFloats(const HfTensorStore &store, const std::string &key,
                  std::vector<float> &out, std::vector<int64_t> &shape) {
  std::optional<HfTensorStore::Entry> e = store.find(key);
  const std::string &dtype = e->tensor->dtypeName;
  if (dtype != "F32" && dtype != "BF16" && dtype != "F16")
    return Status::error(e->file->path() + ": tensor '" + key + "' has dtype " +
                         dtype + ", expected F32, BF16 or F16");
  shape = e->tensor->shape;
  std::vector<uint8_t> raw;
  if (Status s = e->file->read(e->tensor->begin,
                               e->tensor->end - e->tensor->begin,
                               [&](const void *p, size_t n) {
                                 auto *c = static_cast<const uint8_t *>(p);
                                 raw.insert(raw.end(), c, c + n);
                               });
      !s)
    return s;
  NonFiniteScan scan(dtype == "F32"   ? DType::F32
                     : dtype == "F16" ? DType::F16
                                      : DType::BF16);
  scan.scan(raw.data(), raw.size());
  if (scan.found())
    return nonFiniteError(e->file->path(), key, scan.firstIndex(),
                          scan.firstIsNaN());
  const size_t size = dtype == "F32" ? 4 : 2;
  out.resize(raw.size() / size);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, raw.data() + i * size, size);
    if (dtype == "BF16")
      bits <<= 16;
    float f;
    if (dtype == "F16")
      f = f16BitsToFloat(uint16_t(bits));
    else
      std::memcpy(&f, &bits, 4);
    out[i] = f;
  }
  return Status::ok();
}

} // namespace

Status Fp8Weight::load(const HfTensorStore &store, const std::string &prefix,
                       const std::vector<int64_t> &blockSize, bool bytes) {
  std::optional<HfTensorStore::Entry> w = store.find(prefix + ".weight");
  if (!w || w->tensor->dtypeName != "F8_E4M3" || w->tensor->shape.size() != 2)
    return Status::error(store.indexPath() + ": '" + prefix +
                         ".weight' is not a 2-D F8_E4M3 tensor");
  n = w->tensor->shape[0], k = w->tensor->shape[1];
  std::vector<int64_t> shape;
  const bool blocked = bool(store.find(prefix + ".weight_scale_inv"));
  const std::string scaleKey =
      prefix + (blocked ? ".weight_scale_inv" : ".weight_scale");
  if (!store.find(scaleKey))
    return Status::error(store.indexPath() + ": F8_E4M3 weight '" + prefix +
                         ".weight' has no weight_scale or weight_scale_inv");
  if (Status s = readFloats(store, scaleKey, scales, shape); !s)
    return s;
  auto bad = [&](const std::string &want) {
    return Status::error(store.indexPath() + ": '" + scaleKey + "' is " +
                         shapeString(shape) + "; expected " + want);
  };
  if (blocked) {
    if (blockSize.size() != 2 || blockSize[0] < 1 || blockSize[1] < 1)
      return bad("a weight_block_size [b0, b1] in quantization_config");
    rowsPerScale = blockSize[0], group = std::min(blockSize[1], k);
    const int64_t rb = (n + rowsPerScale - 1) / rowsPerScale,
                  cb = (k + group - 1) / group;
    if (shape != std::vector<int64_t>{rb, cb})
      return bad(shapeString({rb, cb}) + " for blocks of " +
                 shapeString(blockSize));
  } else if (scales.size() == 1) {
    rowsPerScale = n, group = k; // per tensor
  } else if (int64_t(scales.size()) == n && shape[0] == n) {
    rowsPerScale = 1, group = k; // per output row
  } else {
    return bad("[], [1], [N] or [N, 1] with N = " + std::to_string(n));
  }
  codes.clear();
  if (!bytes)
    return Status::ok();
  codes.reserve(size_t(n * k));
  if (Status s =
          w->file->read(w->tensor->begin, w->tensor->end - w->tensor->begin,
                        [&](const void *p, size_t size) {
                          auto *c = static_cast<const uint8_t *>(p);
                          codes.insert(codes.end(), c, c + size);
                        });
      !s)
    return s;
  // e4m3 has no infinities; S.1111.111 is its NaN.
  for (size_t i = 0; i < codes.size(); ++i)
    if ((codes[i] & 0x7f) == 0x7f)
      return nonFiniteError(w->file->path(), prefix + ".weight", i, true);
  return Status::ok();
}

float Fp8Weight::scaleAt(int64_t row, int64_t col) const {
  const int64_t groupsPerRow = (k + group - 1) / group;
  return scales[size_t((row / rowsPerScale) * groupsPerRow + col / group)];
}

std::vector<float> Fp8Weight::values() const {
  std::vector<float> w(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c)
      w[r * k + c] = e4m3ToFloat(codes[r * k + c]) * scaleAt(r, c);
  return w;
}

std::vector<uint8_t> Fp8Weight::blocks() const {
  std::vector<uint8_t> out(
      size_t(quantTensorBytes(DType::F8E4M3, n, k, group)));
  uint8_t *p = out.data();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; c += group) {
      const int64_t len = std::min(group, k - c);
      const uint16_t d = floatToF16Bits(scaleAt(r, c));
      std::memcpy(p, &d, 2);
      std::memcpy(p + 2, codes.data() + r * k + c, size_t(len));
      p += quantBlockBytes(DType::F8E4M3, len);
    }
  return out;
}

} // namespace ingot::compiler::hf
