//===- ExternalWeights.cpp - Weights kept outside the artifact ------------===//
#include "compiler/ExternalWeights.h"

#include "ingot/SourceSlice.h"

#include <set>

namespace ingot::compiler {

Status ExternalWeightsBuilder::keepOutside(const ParamSpec &spec,
                                           TensorEntry &t) {
  std::vector<std::string> parts = spec.parts;
  if (parts.empty())
    parts.push_back(spec.name);
  for (const std::string &name : parts) {
    SourcePart part;
    if (Status s = parseSourcePart(name, &part); !s)
      return Status::error("weight '" + spec.name + "': " + s.message());
    std::optional<WeightSource::Location> at = weights_.locate(part.key);
    if (!at)
      return Status::error(
          modelPath_ + ": weight '" + spec.name +
          "' cannot be kept outside the artifact: " + "its part '" + part.key +
          "' is not a tensor of a Hugging Face " +
          "safetensors directory (--weights=external reads plain " +
          "safetensors checkpoints only; compile with --weights=embedded)");
    sources_.emplace(part.key, std::move(*at));
  }
  t.external = true;
  t.transform.parts = std::move(parts);
  t.transform.concatAxis = spec.concatAxis;
  t.transform.sourceType = spec.elemType;
  return Status::ok();
}

ExternalWeights ExternalWeightsBuilder::finish() const {
  ExternalWeights out;
  std::set<std::string> files;
  for (const auto &[name, at] : sources_)
    files.insert(at.file);
  out.files.assign(files.begin(), files.end());
  for (const auto &[name, at] : sources_) {
    SourceTensor &t = out.tensors.emplace_back();
    t.name = name;
    t.file = uint32_t(std::distance(files.begin(), files.find(at.file)));
    t.dtype = at.dtype;
    t.shape = at.shape;
  }
  return out;
}

} // namespace ingot::compiler
