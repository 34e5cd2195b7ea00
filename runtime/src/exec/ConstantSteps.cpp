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

/// How many steps after it a control-flow step may pass over (0 for
/// every other kernel).
int64_t skippedSteps(const Step &step) {
  if (step.kernel != "skip" && step.kernel != "skip_unless")
    return 0;
  for (const Attr &a : step.attrs)
    if (a.name == "steps" && a.kind == Attr::Kind::Int)
      return a.i;
  return 0;
}

} // namespace

ConstantSteps findConstantSteps(const Manifest &m) {
  ConstantSteps c;
  c.step.assign(m.steps.size(), false);
  c.buffer.assign(m.buffers.size(), false);
  for (const Buffer &b : m.buffers)
    c.buffer[b.id] = b.kind == BufferKind::Param;
  // Steps a branch may pass over run on some runs only: never constant.
  std::vector<bool> conditional(m.steps.size(), false);
  for (size_t s = 0; s < m.steps.size(); ++s)
    if (int64_t n = skippedSteps(m.steps[s]); n > 0)
      for (size_t k = s + 1; k <= s + size_t(n) && k < m.steps.size(); ++k)
        conditional[k] = true;
  for (size_t s = 0; s < m.steps.size(); ++s) {
    const Step &step = m.steps[s];
    bool constant = !readsRunState(step.kernel) && !conditional[s] &&
                    skippedSteps(step) == 0;
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
