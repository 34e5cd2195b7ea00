//===- ConstantSteps.cpp - Steps that compute the same bytes every run ----===//
#include "exec/ConstantSteps.h"

#include <algorithm>
#include <string_view>

namespace ingot {
namespace {

/// Kernels whose result depends on more than their operands: the paged
/// attention kernels read and write the run's KV cache.
bool readsRunState(std::string_view kernel) {
  return kernel.find("paged") != std::string_view::npos;
}

bool isControlStep(std::string_view kernel) {
  return kernel == "skip" || kernel == "skip_unless" || kernel == "fail";
}

} // namespace

ConstantSteps findConstantSteps(const Manifest &m) {
  ConstantSteps c;
  c.step.assign(m.steps.size(), false);
  c.buffer.assign(m.buffers.size(), false);
  for (const Buffer &b : m.buffers)
    c.buffer[b.id] = b.kind == BufferKind::Param;
  // A buffer both branches of an If write (their copies into its result)
  // holds what the run's branch made: never a constant, even when each
  // writer reads only weights. Steps inside a branch otherwise are: the
  // executor runs each the first time its branch runs.
  std::vector<int> writers(m.buffers.size(), 0);
  for (const Step &step : m.steps)
    for (uint32_t out : step.outputs)
      if (out < writers.size())
        ++writers[out];
  for (size_t s = 0; s < m.steps.size(); ++s) {
    const Step &step = m.steps[s];
    bool constant = !readsRunState(step.kernel) && !isControlStep(step.kernel);
    for (uint32_t out : step.outputs)
      constant &= out < writers.size() && writers[out] == 1;
    // A result sized at run time has no bytes to reserve beside the arena;
    // such a step reruns (its operands are constants, so it is cheap).
    for (uint32_t out : step.outputs)
      constant &=
          out < m.buffers.size() && m.buffers[out].kind != BufferKind::Dynamic;
    size_t inputs = 0;
    for (uint32_t id : step.inputs)
      if (id != kNoBuffer) {
        ++inputs;
        constant &= id < c.buffer.size() && c.buffer[id];
      }
    // A step without inputs makes its result from attributes alone; one
    // of those is as cheap to rerun as to keep, and a weight reader is
    // what pays back the memory.
    if (!constant || inputs == 0)
      continue;
    c.step[s] = true;
    for (uint32_t out : step.outputs)
      if (out < c.buffer.size())
        c.buffer[out] = true;
  }
  c.keep.assign(m.buffers.size(), false);
  auto keepIfResult = [&](uint32_t id) {
    if (id < c.buffer.size() && c.buffer[id] &&
        m.buffers[id].kind != BufferKind::Param)
      c.keep[id] = true;
  };
  for (size_t s = 0; s < m.steps.size(); ++s)
    if (!c.step[s])
      for (uint32_t id : m.steps[s].inputs)
        keepIfResult(id);
  for (const IoSpec &io : m.outputs)
    keepIfResult(io.buffer);
  for (const Buffer &b : m.buffers)
    if (c.keep[b.id])
      c.bytes += b.maxBytes;
  return c;
}

void ConstantProgress::reset(const Manifest &m, const ConstantSteps &c) {
  ran_.assign(m.steps.size(), false);
  written_.assign(m.buffers.size(), false);
  shapes_.assign(m.buffers.size(), {});
  pending_ = size_t(std::count(c.step.begin(), c.step.end(), true));
}

void ConstantProgress::note(const Manifest &m, const ConstantSteps &c, size_t s,
                            const std::vector<shape::Shape> &shapes) {
  if (!c.step[s] || ran_[s])
    return;
  ran_[s] = true;
  --pending_;
  for (uint32_t out : m.steps[s].outputs) {
    written_[out] = true;
    shapes_[out] = shapes[out];
  }
}

void ConstantProgress::restore(std::vector<shape::Shape> &shapes,
                               std::vector<bool> &known) const {
  for (size_t b = 0; b < written_.size(); ++b)
    if (written_[b] && !known[b]) {
      shapes[b] = shapes_[b];
      known[b] = true;
    }
}

} // namespace ingot
