//===- HfWeights.cpp - Weights of a Hugging Face directory ----------------===//
#include "compiler/hf/HfWeights.h"

#include "llvm/ADT/StringRef.h"

namespace ingot::compiler::hf {

Status HfWeightSource::produce(const std::string &name, const ByteSink &sink) {
  auto [key, suffix] = llvm::StringRef(name).split('#');
  std::optional<HfTensorStore::Entry> entry = store_->find(key);
  if (!entry)
    return Status::error(store_->indexPath() + ": no tensor '" + key.str() +
                         "' (for weight '" + name + "')");
  const SafetensorsFile &file = *entry->file;
  const SafetensorsTensor &t = *entry->tensor;
  if (suffix.empty())
    return file.read(t.begin, t.end - t.begin, sink);

  auto bad = [&](const std::string &why) {
    return Status::error(file.path() + ": weight '" + name + "': " + why +
                         " (tensor '" + key.str() + "' is " +
                         shapeString(t.shape) + ")");
  };
  auto [kind, range] = suffix.split('=');
  auto [first, last] = range.split(':');
  int64_t begin, end;
  if ((kind != "rows" && kind != "cols") || first.getAsInteger(10, begin) ||
      last.getAsInteger(10, end) || begin < 0 || begin >= end)
    return bad("bad slice suffix '#" + suffix.str() +
               "' — expected #rows=A:B or #cols=A:B with 0 <= A < B");
  uint64_t esz = t.elementSize;
  if (kind == "rows") {
    if (t.shape.empty() || t.shape.size() > 2 || end > t.shape[0])
      return bad("rows " + range.str() + " are out of range");
    // A row of a 2-D tensor is its column count; of a 1-D one, an element.
    uint64_t rowBytes = esz * (t.shape.size() == 2 ? t.shape[1] : 1);
    return file.read(t.begin + uint64_t(begin) * rowBytes,
                     uint64_t(end - begin) * rowBytes, sink);
  }
  if (t.shape.size() != 2 || end > t.shape[1])
    return bad("cols " + range.str() + " are out of range");
  return file.readColumns(t, begin, end, sink);
}

} // namespace ingot::compiler::hf
