//===- InspectFormats.cpp - Weight bytes by storage format ----------------===//
#include "Inspect.h"

#include "ingot/Quant.h"

#include <algorithm>

namespace ingot::cli {

std::vector<WeightFormatTotal> weightFormats(const Manifest &m) {
  std::vector<WeightFormatTotal> totals;
  for (const TensorEntry &t : m.tensors) {
    const std::string name = dtypeName(t.dtype);
    auto it = std::find_if(totals.begin(), totals.end(),
                           [&](const WeightFormatTotal &f) {
                             return f.format == name;
                           });
    if (it == totals.end()) {
      totals.push_back({name, t.groupSize});
      it = totals.end() - 1;
    }
    uint64_t elements = 1;
    for (int64_t d : t.shape)
      elements *= uint64_t(std::max<int64_t>(d, 0));
    if (it->groupSize != t.groupSize)
      it->groupSize = -1; // several group sizes (per channel, mixed K)
    it->perChannel &=
        t.groupSize > 0 && !t.shape.empty() && t.groupSize == t.shape.back();
    ++it->tensors;
    it->elements += elements;
    it->bytes += t.bytes;
  }
  std::sort(totals.begin(), totals.end(),
            [](const WeightFormatTotal &a, const WeightFormatTotal &b) {
              return a.bytes > b.bytes;
            });
  return totals;
}

const TensorEntry *lmHeadWeight(const Manifest &m) {
  for (const Step &s : m.steps) {
    if (s.kernel != "linear" || s.origin != "lm_head" || s.inputs.size() < 2 ||
        s.inputs[1] >= m.buffers.size())
      continue;
    const Buffer &b = m.buffers[s.inputs[1]];
    if (b.kind == BufferKind::Param && b.tensorIndex >= 0 &&
        size_t(b.tensorIndex) < m.tensors.size())
      return &m.tensors[b.tensorIndex];
  }
  return nullptr;
}

} // namespace ingot::cli
