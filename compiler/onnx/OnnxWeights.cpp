//===- OnnxWeights.cpp - Tensor bytes of an ONNX model --------------------===//
//
// ONNX stores a tensor's data in one of three places: `raw_data` (little-
// endian bytes), a typed repeated field (float_data, int64_data, int32_data
// for int32 and bool) or an external file (data_location EXTERNAL with
// location/offset/length entries). All three are streamed in bounded chunks
// so a multi-GB external file is never held in memory at once.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxWeights.h"
#include "compiler/onnx/OnnxExternalData.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>

namespace ingot::compiler::onnximport {
namespace {

using onnx::TensorProto;

/// Chunk size for streaming external files and converting typed fields.
constexpr size_t kChunkBytes = size_t(4) << 20;

/// ONNX dtypes newer than Debian's onnx-ml.pb.h (numbers fixed by the
/// spec): float8 (17-20) is one byte per value; uint4, int4, float4e2m1
/// (21-23) pack two values per byte and uint2, int2 (25, 26) four, the
/// first value in the low bits.
constexpr int32_t kFirstFloat8 = 17, kLastFloat8 = 20, kUInt4 = 21,
                  kFloat4E2M1 = 23, kUInt2 = 25, kInt2 = 26;

/// Values per stored byte in the model file (1 unless packed).
int64_t valuesPerByte(int32_t dataType) {
  if (dataType >= kUInt4 && dataType <= kFloat4E2M1)
    return 2;
  return dataType == kUInt2 || dataType == kInt2 ? 4 : 1;
}

/// Bytes the model file holds for `count` values of `dataType`.
uint64_t sourceBytes(int32_t dataType, uint64_t count, int64_t elemSize) {
  const int64_t per = valuesPerByte(dataType);
  return per == 1 ? count * uint64_t(elemSize)
                  : (count + uint64_t(per) - 1) / uint64_t(per);
}

/// A sink that takes packed bytes and passes on `count` values one per
/// byte (ingot's storage of the narrow types), dropping the padding bits
/// of the last byte.
ByteSink unpackingSink(int64_t per, int64_t count, const ByteSink &sink) {
  auto left = std::make_shared<int64_t>(count);
  return [per, left, sink](const void *data, size_t size) {
    const int bits = int(8 / per);
    const auto *packed = static_cast<const uint8_t *>(data);
    std::vector<uint8_t> out;
    out.reserve(size * size_t(per));
    for (size_t i = 0; i < size; ++i)
      for (int64_t k = 0; k < per && *left > 0; ++k, --*left)
        out.push_back(uint8_t((packed[i] >> (k * bits)) & ((1 << bits) - 1)));
    if (!out.empty())
      sink(out.data(), out.size());
  };
}

/// Emits a typed repeated field converted to `Out` elements, in chunks.
template <typename Out, typename Field>
void streamConverted(const Field &field, const ByteSink &sink) {
  std::vector<Out> buffer;
  buffer.reserve(std::min<size_t>(field.size(), kChunkBytes / sizeof(Out)));
  for (const auto &v : field) {
    buffer.push_back(static_cast<Out>(v));
    if (buffer.size() * sizeof(Out) >= kChunkBytes) {
      sink(buffer.data(), buffer.size() * sizeof(Out));
      buffer.clear();
    }
  }
  if (!buffer.empty())
    sink(buffer.data(), buffer.size() * sizeof(Out));
}

/// Values held in the typed field of the tensor's dtype (int32_data also
/// carries bool, one value per element).
int64_t typedCount(const TensorProto &tensor) {
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
    return tensor.float_data_size();
  case TensorProto::INT64:
    return tensor.int64_data_size();
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return tensor.uint64_data_size();
  case TensorProto::DOUBLE:
    return tensor.double_data_size();
  default: // the narrow integers, bool, float16 and bfloat16 bits, float8
           // codes, and packed bytes of the 4- and 2-bit types
    return tensor.int32_data_size();
  }
}

/// Values the typed field must hold for `count` elements.
int64_t typedCountFor(const TensorProto &tensor, int64_t count) {
  const int64_t per = valuesPerByte(tensor.data_type());
  return (count + per - 1) / per;
}

/// Size checks shared by streaming and validation: dtype and byte count.
Status expectedBytesOf(const TensorProto &tensor, const std::string &name,
                       const std::string &file, uint64_t &bytes) {
  std::optional<int64_t> elemSize = storedElementSize(tensor.data_type());
  if (!elemSize)
    return Status::error(tensorPrefix(file, name) + "dtype " +
                         dtypeName(tensor.data_type()) +
                         " is not supported — supported: " + kSupportedDtypes);
  std::optional<int64_t> count = elementCount(tensor);
  if (!count || *count > std::numeric_limits<int64_t>::max() / *elemSize)
    return Status::error(tensorPrefix(file, name) + "invalid dims");
  bytes = sourceBytes(tensor.data_type(), uint64_t(*count), *elemSize);
  return Status::ok();
}

} // namespace

std::string dtypeName(int32_t dataType) {
  static const char *const names[] = {
      "undefined",      "float32",      "uint8",          "int8",
      "uint16",         "int16",        "int32",          "int64",
      "string",         "bool",         "float16",        "float64",
      "uint32",         "uint64",       "complex64",      "complex128",
      "bfloat16",       "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
      "float8e5m2fnuz", "uint4",        "int4",           "float4e2m1",
      "float8e8m0",     "uint2",        "int2",           "float6e2m3",
      "float6e3m2"};
  if (dataType >= 0 && size_t(dataType) < std::size(names))
    return names[dataType];
  return "dtype #" + std::to_string(dataType);
}

std::optional<int64_t> storedElementSize(int32_t dataType) {
  switch (dataType) {
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32:
    return 4;
  case TensorProto::INT64:
  case TensorProto::UINT64:
  case TensorProto::DOUBLE:
    return 8;
  case TensorProto::INT16:
  case TensorProto::UINT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::BOOL:
  case TensorProto::INT8:
  case TensorProto::UINT8:
    return 1;
  default: // float8, float4e2m1 and the 4- and 2-bit integers: one per byte
    if ((dataType >= kFirstFloat8 && dataType <= kFloat4E2M1) ||
        dataType == kUInt2 || dataType == kInt2)
      return 1;
    return std::nullopt;
  }
}

std::optional<int64_t> elementCount(const TensorProto &tensor) {
  int64_t n = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d != 0 && n > std::numeric_limits<int64_t>::max() / d))
      return std::nullopt;
    n *= d;
  }
  return n;
}

Status checkTensorData(const TensorProto &tensor, const std::string &name,
                       const std::string &modelDir, const std::string &file) {
  uint64_t bytes;
  if (Status s = expectedBytesOf(tensor, name, file, bytes); !s)
    return s;
  if (tensor.data_location() == TensorProto::EXTERNAL) {
    ExternalRange range;
    return resolveExternal(tensor, name, modelDir, file, bytes, range);
  }
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != bytes)
      return Status::error(tensorPrefix(file, name) + "raw_data holds " +
                           std::to_string(tensor.raw_data().size()) +
                           " bytes, expected " + std::to_string(bytes));
    return Status::ok();
  }
  int64_t have = typedCount(tensor),
          count = typedCountFor(tensor, *elementCount(tensor));
  if (have != count)
    return Status::error(tensorPrefix(file, name) + "holds " +
                         std::to_string(have) + " values, expected " +
                         std::to_string(count));
  return Status::ok();
}

Status streamTensor(const TensorProto &tensor, const std::string &name,
                    const std::string &modelDir, const std::string &file,
                    const ByteSink &valueSink) {
  uint64_t bytes;
  if (Status s = expectedBytesOf(tensor, name, file, bytes); !s)
    return s;
  const int64_t per = valuesPerByte(tensor.data_type());
  const ByteSink sink =
      per == 1 ? valueSink
               : unpackingSink(per, *elementCount(tensor), valueSink);
  const int64_t count = typedCountFor(tensor, *elementCount(tensor));

  if (tensor.data_location() == TensorProto::EXTERNAL) {
    ExternalRange range;
    if (Status s = resolveExternal(tensor, name, modelDir, file, bytes, range);
        !s)
      return s;
    std::ifstream in(range.path, std::ios::binary);
    if (!in || !in.seekg(std::streamoff(range.offset)))
      return Status::error(tensorPrefix(file, name) +
                           "cannot read external data " + "file '" +
                           range.path.string() + "': " + std::strerror(errno));
    std::vector<char> chunk(std::min<uint64_t>(range.length, kChunkBytes));
    for (uint64_t left = range.length; left > 0;) {
      size_t n = size_t(std::min<uint64_t>(left, chunk.size()));
      if (!in.read(chunk.data(), std::streamsize(n)))
        return Status::error(tensorPrefix(file, name) + "short read from '" +
                             range.path.string() + "'");
      sink(chunk.data(), n);
      left -= n;
    }
    return Status::ok();
  }

  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != bytes)
      return Status::error(tensorPrefix(file, name) + "raw_data holds " +
                           std::to_string(raw.size()) + " bytes, expected " +
                           std::to_string(bytes));
    for (size_t at = 0; at < raw.size(); at += kChunkBytes)
      sink(raw.data() + at, std::min(kChunkBytes, raw.size() - at));
    return Status::ok();
  }

  int64_t have = typedCount(tensor);
  if (have != count)
    return Status::error(tensorPrefix(file, name) + "holds " +
                         std::to_string(have) + " values, expected " +
                         std::to_string(count));
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
    streamConverted<float>(tensor.float_data(), sink);
    break;
  case TensorProto::INT64:
    streamConverted<int64_t>(tensor.int64_data(), sink);
    break;
  case TensorProto::INT32:
    streamConverted<int32_t>(tensor.int32_data(), sink);
    break;
  case TensorProto::INT16:
    streamConverted<int16_t>(tensor.int32_data(), sink);
    break;
  case TensorProto::INT8:
    streamConverted<int8_t>(tensor.int32_data(), sink);
    break;
  case TensorProto::UINT8:
    streamConverted<uint8_t>(tensor.int32_data(), sink);
    break;
  case kFirstFloat8:
  case kFirstFloat8 + 1:
  case kFirstFloat8 + 2:
  case kLastFloat8:
  case kUInt4: // packed bytes
  case kUInt4 + 1:
  case kFloat4E2M1:
  case kUInt2:
  case kInt2:
    streamConverted<uint8_t>(tensor.int32_data(), sink);
    break;
  case TensorProto::UINT16:
  case TensorProto::FLOAT16: // int32_data holds the 16 bits of each value
  case TensorProto::BFLOAT16:
    streamConverted<uint16_t>(tensor.int32_data(), sink);
    break;
  case TensorProto::UINT32:
    streamConverted<uint32_t>(tensor.uint64_data(), sink);
    break;
  case TensorProto::UINT64:
    streamConverted<uint64_t>(tensor.uint64_data(), sink);
    break;
  case TensorProto::DOUBLE:
    streamConverted<double>(tensor.double_data(), sink);
    break;
  default: // BOOL
    std::vector<uint8_t> b;
    for (int32_t v : tensor.int32_data())
      b.push_back(v != 0);
    if (!b.empty())
      sink(b.data(), b.size());
    break;
  }
  return Status::ok();
}

Status readTensor(const TensorProto &tensor, const std::string &name,
                  const std::string &modelDir, const std::string &file,
                  std::vector<char> &bytes) {
  bytes.clear();
  return streamTensor(tensor, name, modelDir, file,
                      [&](const void *data, size_t size) {
                        const char *p = static_cast<const char *>(data);
                        bytes.insert(bytes.end(), p, p + size);
                      });
}

void OnnxWeightSource::addOwnedTensor(const std::string &name,
                                      onnx::TensorProto tensor) {
  auto owned = std::make_unique<onnx::TensorProto>(std::move(tensor));
  tensors_[name] = owned.get();
  owned_[name] = std::move(owned);
}

Status OnnxWeightSource::produce(const std::string &name,
                                 const ByteSink &sink) {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return Status::error(file_ + ": no tensor named '" + name +
                         "' in the model");
  return streamTensor(*it->second, name, modelDir_, file_, sink);
}

} // namespace ingot::compiler::onnximport
