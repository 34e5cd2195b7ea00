//===- HfWeights.cpp - Weights of a Hugging Face directory ----------------===//
#include "compiler/hf/HfWeights.h"

#include "ingot/SourceSlice.h"

#include <filesystem>

namespace ingot::compiler::hf {

Status HfWeightSource::produce(const std::string &name, const ByteSink &sink) {
  SourcePart part;
  if (Status s = parseSourcePart(name, &part); !s)
    return Status::error(store_->indexPath() + ": " + s.message());
  std::optional<HfTensorStore::Entry> entry = store_->find(part.key);
  if (!entry)
    return Status::error(store_->indexPath() + ": no tensor '" + part.key +
                         "' (for weight '" + name + "')");
  const SafetensorsFile &file = *entry->file;
  const SafetensorsTensor &t = *entry->tensor;
  StoredTensor stored{file.path(), t.dtypeName, t.dtype, t.elementSize,
                      t.shape};
  return produceSourcePart(
      stored, part, name,
      [&](uint64_t offset, uint64_t size, const ByteSink &out) {
        return file.read(t.begin + offset, size, out);
      },
      sink);
}

std::optional<WeightSource::Location>
HfWeightSource::locate(const std::string &key) const {
  std::optional<HfTensorStore::Entry> entry = store_->find(key);
  if (!entry)
    return std::nullopt;
  // The file's name inside the model directory: the loader looks for it in
  // the directory --weights names, wherever that is.
  return Location{
      std::filesystem::path(entry->file->path()).filename().string(),
      entry->tensor->dtypeName, entry->tensor->shape};
}

} // namespace ingot::compiler::hf
