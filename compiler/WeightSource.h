//===- WeightSource.h - Where a compile session reads weights ---*- C++ -*-===//
//
// `ingot.param "name"` ops name tensors; the weight source of the session
// produces their bytes (row-major, in the param's element type) one tensor at
// a time when the artifact writer streams them, so compiling never holds all
// weights in memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/Status.h"

#include <string>

namespace ingot::compiler {

class WeightSource {
public:
  virtual ~WeightSource() = default;
  /// Streams the bytes of the named tensor into `sink`. The size must match
  /// the param's type; errors name the tensor and the file it lives in.
  virtual Status produce(const std::string &name, const ByteSink &sink) = 0;
};

} // namespace ingot::compiler
