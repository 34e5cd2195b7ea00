//===- WeightSource.h - Where weight bytes come from ------------*- C++ -*-===//
//
// `ingot.param "name"` ops name tensors; the weight source of a compile
// session produces their bytes (row-major, in the param's element type) one
// tensor at a time when the artifact writer streams them, so compiling
// never holds all weights in memory. The runtime's loader of external
// weights (--weights DIR) is a weight source too, over the files it maps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ArtifactWriter.h"
#include "ingot/DType.h"
#include "ingot/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ingot {

class WeightSource {
public:
  virtual ~WeightSource() = default;
  /// Streams the bytes of the named tensor into `sink`. The size must match
  /// the param's type; errors name the tensor and the file it lives in.
  virtual Status produce(const std::string &name, const ByteSink &sink) = 0;

  /// A tensor the source already holds in one of ingot's block formats
  /// (ingot/Quant.h), as a GGUF file holds Q8_0, Q4_0 and Q4_1 rows.
  struct Blocks {
    DType format;
    int64_t group;
  };
  /// The block format `name` is stored in, if the source keeps its bytes
  /// that way; produce() still yields its values.
  virtual std::optional<Blocks> storedBlocks(const std::string &name) const {
    (void)name;
    return std::nullopt;
  }
  /// Where the source tensor `key` (a checkpoint name, no slice suffix)
  /// lives, for an artifact that keeps its weights outside
  /// (--weights=external): its file's name in the model directory, its
  /// stored dtype and shape. nullopt: this source cannot be kept outside.
  struct Location {
    std::string file;
    std::string dtype; // safetensors' name: "F32", "BF16", ...
    std::vector<int64_t> shape;
  };
  virtual std::optional<Location> locate(const std::string &key) const {
    (void)key;
    return std::nullopt;
  }

  /// Streams the stored blocks of `name`, row after row, bit for bit.
  virtual Status produceStored(const std::string &name, const ByteSink &sink) {
    (void)sink;
    return Status::error("weight '" + name + "' is not stored in blocks");
  }
};

} // namespace ingot
