//===- OnnxExternalData.h - Tensors stored beside the model -----*- C++ -*-===//
//
// Private to OnnxWeights.cpp: a tensor whose data_location is EXTERNAL
// names a file under the model's directory and a byte range of it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/onnx/OnnxWeights.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace ingot::compiler::onnximport {

/// "FILE: tensor 'NAME': ", the start of every message about a tensor.
inline std::string tensorPrefix(const std::string &file,
                                const std::string &name) {
  return file + ": tensor '" + name + "': ";
}

/// Where an external tensor lives, from its external_data entries.
struct ExternalRange {
  std::string location;
  std::filesystem::path path;
  uint64_t offset = 0;
  uint64_t length = 0;
};

/// Resolves and validates the external data range of `tensor`: the file
/// must exist under the model's directory and hold [offset, offset+length)
/// (OnnxExternalData.cpp).
Status resolveExternal(const onnx::TensorProto &tensor, const std::string &name,
                       const std::string &modelDir, const std::string &file,
                       uint64_t expectedBytes, ExternalRange &range);

} // namespace ingot::compiler::onnximport
