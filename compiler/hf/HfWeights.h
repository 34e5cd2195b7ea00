//===- HfWeights.h - Weights of a Hugging Face directory --------*- C++ -*-===//
//
// The weight source of an HF import: produces the bytes of a safetensors
// tensor, or of a slice of a fused one named "KEY#rows=A:B" (rows of a 2-D
// tensor, elements of a 1-D one) or "KEY#cols=A:B" (columns of a 2-D one),
// in the stored dtype, streamed without holding the tensor in memory;
// "KEY#plus1" is 1 + the tensor in f32 (Gemma's norm weights). The slicing
// is format's (ingot/SourceSlice.h), shared with the runtime's loader of
// external weights.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/hf/Safetensors.h"
#include "ingot/WeightSource.h"

#include <memory>

namespace ingot::compiler::hf {

class HfWeightSource : public WeightSource {
public:
  explicit HfWeightSource(std::unique_ptr<HfTensorStore> store)
      : store_(std::move(store)) {}
  Status produce(const std::string &name, const ByteSink &sink) override;
  std::optional<Location> locate(const std::string &key) const override;

private:
  std::unique_ptr<HfTensorStore> store_;
};

} // namespace ingot::compiler::hf
