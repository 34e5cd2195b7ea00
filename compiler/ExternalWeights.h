//===- ExternalWeights.h - Weights kept outside the artifact ----*- C++ -*-===//
//
// With --weights=external the artifact holds no weight bytes. Each weight's
// manifest entry records instead how it is made (its source parts, their
// concatenation, and the quantisation and packing its dtype and layout
// imply), and the manifest lists every source tensor those parts read,
// with its file, dtype and shape as compiled, so the runtime can make the
// same bytes at load and refuse a weight set that differs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/ParamProducer.h"
#include "ingot/Status.h"

#include <map>
#include <string>

namespace ingot::compiler {

class ExternalWeightsBuilder {
public:
  /// `modelPath` names the model in messages.
  ExternalWeightsBuilder(const WeightSource &weights, std::string modelPath)
      : weights_(weights), modelPath_(std::move(modelPath)) {}

  /// Marks `t`, the tensor of `spec`, as made at load; refuses a part the
  /// weight source cannot locate in a safetensors file.
  Status keepOutside(const ParamSpec &spec, TensorEntry &t);

  /// The files and source tensors of every part kept outside so far.
  ExternalWeights finish() const;

private:
  const WeightSource &weights_;
  std::string modelPath_;
  std::map<std::string, WeightSource::Location> sources_; // by tensor name
};

} // namespace ingot::compiler
