//===- OnnxExternalData.cpp - Tensors stored beside the model -------------===//
//
// A tensor's external_data entries (location, offset, length) checked
// against the file they name: inside the model's directory, present, and
// long enough, with clear errors naming the tensor otherwise.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxExternalData.h"

#include <algorithm>

namespace ingot::compiler::onnximport {
namespace {

bool parseUnsigned(const std::string &text, uint64_t &out) {
  if (text.empty() || text.size() > 20)
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    uint64_t next = v * 10 + uint64_t(c - '0');
    if (next / 10 != v)
      return false;
    v = next;
  }
  out = v;
  return true;
}

} // namespace

Status resolveExternal(const onnx::TensorProto &tensor, const std::string &name,
                       const std::string &modelDir, const std::string &file,
                       uint64_t expectedBytes, ExternalRange &range) {
  bool hasLength = false;
  for (const auto &entry : tensor.external_data()) {
    const std::string &key = entry.key();
    if (key == "location") {
      range.location = entry.value();
    } else if (key == "offset" || key == "length") {
      uint64_t v;
      if (!parseUnsigned(entry.value(), v))
        return Status::error(tensorPrefix(file, name) +
                             "invalid external data " + key + " '" +
                             entry.value() + "'");
      (key == "offset" ? range.offset : range.length) = v;
      hasLength |= key == "length";
    }
    // "checksum" and unknown keys carry nothing we need.
  }
  if (range.location.empty())
    return Status::error(tensorPrefix(file, name) +
                         "external data has no 'location' entry");
  std::filesystem::path rel(range.location);
  // Like the ONNX checker, keep external files inside the model directory.
  if (rel.is_absolute() || std::any_of(rel.begin(), rel.end(),
                                       [](const std::filesystem::path &part) {
                                         return part == "..";
                                       }))
    return Status::error(tensorPrefix(file, name) + "external data location '" +
                         range.location +
                         "' must be a relative path inside the model's "
                         "directory");
  range.path = std::filesystem::path(modelDir) / rel;
  if (!hasLength)
    range.length = expectedBytes;
  if (range.length != expectedBytes)
    return Status::error(tensorPrefix(file, name) + "external data length " +
                         std::to_string(range.length) + " in '" +
                         range.location + "' does not match the " +
                         std::to_string(expectedBytes) +
                         " bytes its dtype and shape need");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(range.path, ec))
    return Status::error(tensorPrefix(file, name) + "external data file '" +
                         range.location + "' not found (looked for " +
                         range.path.string() + ")");
  uint64_t size = std::filesystem::file_size(range.path, ec);
  if (ec)
    return Status::error(tensorPrefix(file, name) +
                         "cannot stat external data " + "file '" +
                         range.path.string() + "': " + ec.message());
  if (range.offset > size || range.length > size - range.offset)
    return Status::error(tensorPrefix(file, name) + "external data range [" +
                         std::to_string(range.offset) + ", " +
                         std::to_string(range.offset + range.length) +
                         ") exceeds the " + std::to_string(size) +
                         " bytes of '" + range.path.string() + "'");
  return Status::ok();
}

} // namespace ingot::compiler::onnximport
