//===- ManifestValidateMemory.cpp - Weights and arena without overlap -----===//
//
// The writer packs tensors one after another, and the memory planner
// (passes/PlanMemory.cpp) gives arena buffers the same bytes only when their
// live ranges (first write to last read, to the end for model outputs) do
// not overlap, or when an in-place kernel's output takes over the whole
// slice of an input that dies at that step (same offset, same element
// size), or when a concat's inputs lie in their slabs of its output. Anything
// else would let one value overwrite another that is still read: the plan
// would run and answer wrongly.
//
//===----------------------------------------------------------------------===//
#include "ManifestValidate.h"

#include "ArtifactFormatUtil.h"
#include "ingot/KernelTable.h"

#include <algorithm>
#include <map>

namespace ingot::format {
namespace {

std::string range(uint64_t offset, uint64_t bytes) {
  return "[" + std::to_string(offset) + ", +" + std::to_string(bytes) + ")";
}

/// Live ranges of the arena buffers, in step indices (inclusive).
struct Liveness {
  std::vector<int64_t> first, last; // -1: never written
};

bool isArena(const Manifest &m, uint32_t id) {
  return id != kNoBuffer && m.buffers[id].kind == BufferKind::Arena;
}

/// Fills the live ranges; fails when a step reads an arena buffer no
/// earlier step wrote, or a model output is an arena buffer never written.
Status computeLiveness(const Manifest &m, Liveness *lv) {
  const int64_t end = int64_t(m.steps.size());
  lv->first.assign(m.buffers.size(), -1);
  lv->last.assign(m.buffers.size(), -1);
  for (int64_t s = 0; s < end; ++s) {
    const Step &step = m.steps[s];
    for (uint32_t id : step.inputs) {
      if (!isArena(m, id))
        continue;
      if (lv->first[id] < 0)
        return fail(describeStep(m, s) + " reads " + describeBuffer(m, id) +
                    " before any step writes it");
      lv->last[id] = s;
    }
    for (uint32_t id : step.outputs) {
      if (lv->first[id] < 0)
        lv->first[id] = s;
      lv->last[id] = s;
    }
  }
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const uint32_t id = m.outputs[i].buffer;
    if (!isArena(m, id))
      continue;
    if (lv->first[id] < 0)
      return fail("output " + std::to_string(i) + " " +
                  quoted(m.outputs[i].name) + " is " + describeBuffer(m, id) +
                  ", which no step writes");
    lv->last[id] = end; // read by the caller after the last step
  }
  return Status::ok();
}

bool overlaps(const Buffer &a, const Buffer &b) {
  return a.maxBytes && b.maxBytes &&
         a.arenaOffset < b.arenaOffset + b.maxBytes &&
         b.arenaOffset < a.arenaOffset + a.maxBytes;
}

/// Why output `out` of step `s` may not share bytes with live buffer
/// `other`; "" when it is the planner's in-place hand-over.
std::string conflict(const Manifest &m, const Liveness &lv, int64_t s,
                     uint32_t out, uint32_t other) {
  const Step &step = m.steps[s];
  const Buffer &o = m.buffers[out], &b = m.buffers[other];
  const bool isInput = std::find(step.inputs.begin(), step.inputs.end(),
                                 other) != step.inputs.end();
  const std::string pair = describeBuffer(m, out) + " " +
                           range(o.arenaOffset, o.maxBytes) + " and " +
                           describeBuffer(m, other) + " " +
                           range(b.arenaOffset, b.maxBytes);
  if (!isInput || lv.last[other] != s)
    return "its output " + pair + " share arena bytes while both are live (" +
           describeBuffer(m, other) + " from step " +
           std::to_string(lv.first[other]) + " to " +
           (lv.last[other] == int64_t(m.steps.size())
                ? std::string("the end, as a model output")
                : "step " + std::to_string(lv.last[other])) +
           ")";
  // A kernel this runtime lacks is refused by name when the plan runs
  // (Executor): whether it may work in place is not for this check.
  const KernelSpec *k = findKernelSpec(step.kernel);
  if (k && !k->inPlace)
    return "its output " + pair + " share arena bytes, but " +
           quoted(step.kernel) + " is not an in-place kernel";
  if (o.arenaOffset != b.arenaOffset ||
      dtypeSize(o.dtype) != dtypeSize(b.dtype))
    return "its output " + pair +
           " share arena bytes, but an in-place "
           "output must take over its input's slice at the same offset and "
           "with the same element size";
  return "";
}

/// Whether live buffer `in` is an input slab of concat step `s`'s output
/// `out`, read no later than out, whose range then covers it.
bool isConcatSlab(const Manifest &m, const Liveness &lv, int64_t s,
                  uint32_t out, uint32_t in) {
  const Step &step = m.steps[s];
  return step.outputs.size() == 1 && step.outputs[0] == out &&
         lv.last[in] <= lv.last[out] && concatHoldsInputInPlace(m, s, in);
}

/// Buffers live before step `s` whose bytes meet `id`'s; `live` maps arena
/// offsets to buffers with pairwise disjoint ranges.
std::vector<uint32_t> liveOverlapping(const Manifest &m,
                                      const std::map<uint64_t, uint32_t> &live,
                                      uint32_t id) {
  const Buffer &b = m.buffers[id];
  std::vector<uint32_t> r;
  auto it = live.upper_bound(b.arenaOffset);
  if (it != live.begin() && overlaps(m.buffers[std::prev(it)->second], b))
    r.push_back(std::prev(it)->second);
  for (; it != live.end() && it->first < b.arenaOffset + b.maxBytes; ++it)
    r.push_back(it->second);
  return r;
}

/// The outputs step `s` writes first (each once, non-empty slices).
std::vector<uint32_t> bornAt(const Manifest &m, const Liveness &lv, int64_t s) {
  std::vector<uint32_t> born;
  for (uint32_t id : m.steps[s].outputs)
    if (isArena(m, id) && lv.first[id] == s && m.buffers[id].maxBytes &&
        std::find(born.begin(), born.end(), id) == born.end())
      born.push_back(id);
  return born;
}

} // namespace

} // namespace ingot::format

namespace ingot {

bool concatHoldsInputInPlace(const Manifest &m, size_t s, uint32_t in) {
  if (s >= m.steps.size())
    return false;
  const Step &step = m.steps[s];
  const auto known = [&](uint32_t id) { return id < m.buffers.size(); };
  if (step.kernel != "concat" || step.outputs.size() != 1 ||
      !std::all_of(step.inputs.begin(), step.inputs.end(), known) ||
      !known(step.outputs[0]) ||
      std::count(step.inputs.begin(), step.inputs.end(), in) != 1 ||
      !format::isArena(m, in) || !format::isArena(m, step.outputs[0]))
    return false;
  const Buffer &o = m.buffers[step.outputs[0]];
  uint64_t at = 0, slab = 0;
  for (uint32_t id : step.inputs) {
    if (dtypeSize(m.buffers[id].dtype) != dtypeSize(o.dtype))
      return false;
    if (id == in)
      slab = at;
    // Weights and inputs record no maxBytes: their shapes say it.
    uint64_t bytes = dtypeSize(m.buffers[id].dtype);
    for (int64_t d : m.buffers[id].maxShape)
      bytes *= uint64_t(std::max<int64_t>(d, 0));
    at += bytes;
  }
  return at == o.maxBytes && m.buffers[in].arenaOffset == o.arenaOffset + slab;
}

} // namespace ingot

namespace ingot::format {

Status validateTensorLayout(const Manifest &m) {
  std::vector<size_t> order;
  for (size_t i = 0; i < m.tensors.size(); ++i)
    if (m.tensors[i].bytes)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return m.tensors[a].offset < m.tensors[b].offset;
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorEntry &p = m.tensors[order[k - 1]], &t = m.tensors[order[k]];
    if (t.offset < p.offset + p.bytes)
      return fail("tensor " + std::to_string(order[k]) + " " + quoted(t.name) +
                  " " + range(t.offset, t.bytes) + " overlaps tensor " +
                  std::to_string(order[k - 1]) + " " + quoted(p.name) + " " +
                  range(p.offset, p.bytes) +
                  " in the weight section: each tensor needs bytes of its own");
  }
  return Status::ok();
}

Status validateArenaLiveness(const Manifest &m) {
  Liveness lv;
  if (Status s = computeLiveness(m, &lv); !s)
    return s;
  std::vector<std::vector<uint32_t>> diesAt(m.steps.size() + 1);
  for (uint32_t id = 0; id < m.buffers.size(); ++id)
    if (isArena(m, id) && lv.first[id] >= 0 && m.buffers[id].maxBytes)
      diesAt[lv.last[id]].push_back(id);
  std::map<uint64_t, uint32_t> live; // offset -> buffer, disjoint ranges
  for (int64_t s = 0; s < int64_t(m.steps.size()); ++s) {
    const std::vector<uint32_t> born = bornAt(m, lv, s);
    std::vector<uint32_t> slabs; // concat inputs inside a born output
    for (size_t j = 0; j < born.size(); ++j) {
      for (uint32_t other : liveOverlapping(m, live, born[j]))
        if (isConcatSlab(m, lv, s, born[j], other))
          slabs.push_back(other);
        else if (std::string why = conflict(m, lv, s, born[j], other);
                 !why.empty())
          return fail(describeStep(m, s) + ": " + why);
      for (size_t k = 0; k < j; ++k)
        if (overlaps(m.buffers[born[j]], m.buffers[born[k]]))
          return fail(describeStep(m, s) + ": its outputs " +
                      describeBuffer(m, born[k]) + " and " +
                      describeBuffer(m, born[j]) + " share arena bytes");
    }
    // Inputs that die here hand their slices over, then the new values
    // that outlive the step take their places; a concat's output covers
    // the inputs it holds, which it outlives.
    for (uint32_t id : slabs)
      live.erase(m.buffers[id].arenaOffset);
    for (uint32_t id : diesAt[s])
      if (auto it = live.find(m.buffers[id].arenaOffset);
          it != live.end() && it->second == id)
        live.erase(it);
    for (uint32_t id : born)
      if (lv.last[id] > s)
        live[m.buffers[id].arenaOffset] = id;
  }
  return Status::ok();
}

} // namespace ingot::format
