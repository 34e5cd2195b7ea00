//===- HfWeights.h - Weights of a Hugging Face directory --------*- C++ -*-===//
//
// The weight source of an HF import: produces the bytes of a safetensors
// tensor, or of a slice of a fused one named "KEY#rows=A:B" (rows of a 2-D
// tensor, elements of a 1-D one) or "KEY#cols=A:B" (columns of a 2-D one),
// in the stored dtype, streamed without holding the tensor in memory;
// "KEY#plus1" is 1 + the tensor in f32 (Gemma's norm weights).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/WeightSource.h"
#include "compiler/hf/Safetensors.h"

#include <memory>

namespace ingot::compiler::hf {

class HfWeightSource : public WeightSource {
public:
  explicit HfWeightSource(std::unique_ptr<HfTensorStore> store)
      : store_(std::move(store)) {}
  Status produce(const std::string &name, const ByteSink &sink) override;

private:
  std::unique_ptr<HfTensorStore> store_;
};

} // namespace ingot::compiler::hf
