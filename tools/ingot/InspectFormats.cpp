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

namespace {

/// The tensor behind input `i` of `s` when it is a weight, else nullptr.
const TensorEntry *paramInput(const Manifest &m, const Step &s, size_t i) {
  if (s.inputs.size() <= i || s.inputs[i] >= m.buffers.size())
    return nullptr;
  const Buffer &b = m.buffers[s.inputs[i]];
  if (b.kind == BufferKind::Param && b.tensorIndex >= 0 &&
      size_t(b.tensorIndex) < m.tensors.size())
    return &m.tensors[b.tensorIndex];
  return nullptr;
}

} // namespace

const TensorEntry *lmHeadWeight(const Manifest &m) {
  for (const Step &s : m.steps)
    if (s.kernel == "linear" && s.origin == "lm_head")
      if (const TensorEntry *t = paramInput(m, s, 1))
        return t;
  return nullptr;
}

const TensorEntry *embeddingTable(const Manifest &m) {
  for (const Step &s : m.steps)
    if (s.kernel == "gather")
      if (const TensorEntry *t = paramInput(m, s, 0); t && t->shape.size() == 2)
        return t;
  return nullptr;
}

} // namespace ingot::cli
