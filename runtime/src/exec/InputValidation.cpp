//===- InputValidation.cpp - Checks a run's inputs against the manifest ---===//
//
// Names, dtypes, ranks, fixed dims, one value per symbol across inputs, the
// compiled maxima and the data size; each error names the input and what
// the model expects.
//
//===----------------------------------------------------------------------===//
#include "exec/InputValidation.h"

#include "exec/ExecutorMessages.h"

#include <map>

namespace ingot {

Status validateInputs(const Manifest &m, const std::vector<NamedTensor> &inputs,
                      std::vector<size_t> *ioIndex) {
  ioIndex->clear();
  std::vector<bool> seen(m.inputs.size(), false);
  // symbol -> (value, where it was bound)
  std::map<std::string, std::pair<int64_t, std::string>> symbols;
  for (const NamedTensor &nt : inputs) {
    size_t k = 0;
    while (k < m.inputs.size() && m.inputs[k].name != nt.name)
      ++k;
    if (k == m.inputs.size())
      return Status::error("unknown input '" + nt.name +
                           "'; the model's inputs are:" + describeInputs(m));
    if (seen[k])
      return Status::error("input '" + nt.name + "' is given twice");
    seen[k] = true;
    const IoSpec &io = m.inputs[k];
    const HostTensor &t = nt.tensor;
    if (t.dtype != io.dtype)
      return Status::error("input '" + nt.name + "' has dtype " +
                           dtypeName(t.dtype) + "; expected " + describeIo(io));
    if (t.shape.size() != io.dims.size())
      return Status::error(
          "input '" + nt.name + "' has rank " + std::to_string(t.shape.size()) +
          " (shape " + shape::toString(t.shape) + "); expected rank " +
          std::to_string(io.dims.size()) + ": " + describeIo(io));
    for (size_t d = 0; d < io.dims.size(); ++d) {
      const int64_t v = t.shape[d];
      const Dim &dim = io.dims[d];
      const std::string where =
          "input '" + nt.name + "' dim " + std::to_string(d);
      if (v < 0)
        return Status::error(where + " is negative (" + std::to_string(v) +
                             ")");
      if (dim.symbol.empty()) {
        if (dim.size < 0)
          continue; // dynamic without a name: any size
        if (v != dim.size)
          return Status::error(where + " is " + std::to_string(v) +
                               " but the model was compiled for " +
                               std::to_string(dim.size) + ": " +
                               describeIo(io));
        continue;
      }
      auto [it, fresh] = symbols.try_emplace(dim.symbol, v, where);
      if (!fresh && it->second.first != v)
        return Status::error(where + " (" + dim.symbol + ") is " +
                             std::to_string(v) + " but " + it->second.second +
                             " already set " + dim.symbol + " = " +
                             std::to_string(it->second.first));
      for (const SymbolBound &sb : m.symbols)
        if (sb.name == dim.symbol && v > sb.max)
          return Status::error(
              where + ": " + dim.symbol + " = " + std::to_string(v) +
              " exceeds the compiled maximum " + std::to_string(sb.max) +
              "; recompile with --max-dim " + dim.symbol + "=" +
              std::to_string(v));
    }
    const uint64_t bytes =
        uint64_t(shape::numElements(t.shape)) * dtypeSize(t.dtype);
    if (t.data.size() != bytes)
      return Status::error("input '" + nt.name + "' of shape " +
                           shape::toString(t.shape) + " needs " +
                           std::to_string(bytes) + " bytes of data, got " +
                           std::to_string(t.data.size()));
    const Buffer &b = m.buffers[io.buffer];
    if (b.maxBytes && bytes > b.maxBytes)
      return Status::error(
          "input '" + nt.name + "' of shape " + shape::toString(t.shape) +
          " (" + std::to_string(bytes) + " bytes) exceeds its compiled bound " +
          shape::toString(b.maxShape) + "; recompile with a larger --max-dim");
    ioIndex->push_back(k);
  }
  for (size_t k = 0; k < m.inputs.size(); ++k)
    if (!seen[k])
      return Status::error("missing input '" + m.inputs[k].name +
                           "'; the model's inputs are:" + describeInputs(m));
  return Status::ok();
}

} // namespace ingot
