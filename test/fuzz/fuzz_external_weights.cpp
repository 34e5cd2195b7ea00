//===- fuzz_external_weights.cpp - safetensors bytes -> external weights --===//
//
// The fuzzed bytes are the model.safetensors that an artifact compiled with
// --weights=external names. The manifest is fixed here and exercises every
// kind of part (whole, rows, columns, 1 + w, two concatenated) on F32, BF16
// and F16 sources, and int4 quantisation at load: the loader must refuse a
// file without those tensors at those dtypes and shapes, or make every
// weight, and never read outside the file.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "artifact/ExternalWeights.h"
#include "ingot/ArtifactFormat.h"

#include <cstdlib>
#include <vector>

using namespace ingot;

namespace {

Manifest externalManifest() {
  Manifest m;
  auto tensor = [&](const char *name, DType dtype, std::vector<int64_t> shape,
                    std::vector<std::string> parts, DType source,
                    int64_t axis = 0) {
    TensorEntry t;
    t.name = name, t.dtype = dtype, t.shape = std::move(shape);
    t.external = true;
    t.transform = {std::move(parts), axis, source};
    m.tensors.push_back(std::move(t));
  };
  tensor("rows", DType::F32, {4, 3}, {"a#rows=1:5"}, DType::F32);
  tensor("cols", DType::BF16, {4, 3}, {"b#cols=1:4"}, DType::BF16);
  tensor("plus", DType::F32, {8}, {"c#plus1"}, DType::F32);
  tensor("cat", DType::F32, {10, 3}, {"a", "a#rows=0:4"}, DType::F32);
  tensor("side", DType::F32, {6, 6}, {"a", "a"}, DType::F32, 1);
  tensor("q4", DType::Q4, {2, 32}, {"d"}, DType::F32);
  m.tensors.back().groupSize = 32;
  m.externalWeights.files = {"model.safetensors"};
  m.externalWeights.tensors = {{"a", 0, "F32", {6, 3}},
                               {"b", 0, "BF16", {4, 5}},
                               {"c", 0, "F16", {8}},
                               {"d", 0, "F32", {2, 32}}};
  uint64_t section = 0;
  if (!format::layOutTensors(&m, &section))
    std::abort(); // the fixed manifest is wrong: a broken build
  return m;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Manifest m = externalManifest();
  fuzz::writeScratch("weights/model.safetensors", data, size);
  std::vector<uint8_t> space(m.externalWeights.spaceBytes);
  fuzz::report(
      "external weights",
      loadExternalWeights(m, fuzz::scratchDir() + "/weights", space.data()));
  return 0;
}
