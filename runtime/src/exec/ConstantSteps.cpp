//===- ConstantSteps.cpp - Steps that compute the same bytes every run ----===//
#include "exec/ConstantSteps.h"

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

} // namespace ingot
