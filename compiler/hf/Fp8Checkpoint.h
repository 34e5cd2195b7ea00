//===- Fp8Checkpoint.h - FP8 (e4m3) linear weights of a HF dir --*- C++ -*-===//
//
// Private to the Hugging Face importer; the layouts are described in
// Fp8Checkpoint.cpp and docs/quantized-checkpoints.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/hf/Safetensors.h"

#include <string>
#include <vector>

namespace ingot::compiler::hf {

/// One F8_E4M3 linear and its scales: value(r, c) = e4m3(code) · scale,
/// one scale per `rowsPerScale` rows and `group` columns.
struct Fp8Weight {
  int64_t n = 0, k = 0, rowsPerScale = 1, group = 0;
  std::vector<float> scales;
  std::vector<uint8_t> codes; // [n][k], read only with `bytes`

  /// Reads "<prefix>.weight" and its weight_scale(_inv); errors name the
  /// tensor and the shape expected.
  Status load(const HfTensorStore &store, const std::string &prefix,
              const std::vector<int64_t> &blockSize, bool bytes);
  float scaleAt(int64_t row, int64_t col) const;
  std::vector<float> values() const;
  /// Rows in ingot's f8e4m3 format at `group` (scales rounded to f16).
  std::vector<uint8_t> blocks() const;
};

} // namespace ingot::compiler::hf
