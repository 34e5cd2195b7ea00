//===- Executor.cpp - Runs an artifact's plan on the CPU ------------------===//
//
// Buffers resolve to memory once: Param buffers point into the mapped weight
// section, Arena buffers into one anonymous mapping (lazily committed pages,
// 64-B aligned slices), Input buffers to the caller's tensors per run. Each
// run validates the inputs against the manifest, then runs the steps in
// order (ExecutorStep.cpp), tracking every buffer's runtime shape as the
// kernels set it.
//
//===----------------------------------------------------------------------===//

#include "ingot/Executor.h"

#include "exec/ExecutorImpl.h"
#include "exec/ExecutorMessages.h"
#include "exec/FloatEnvironment.h"
#include "exec/InputValidation.h"
#include "exec/PhysicalMemory.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace ingot {

Status Executor::Impl::checkPlan() {
  const Manifest &m = artifact.manifest();
  const size_t nb = m.buffers.size();
  data.assign(nb, nullptr);
  for (size_t i = 0; i < nb; ++i) {
    const Buffer &b = m.buffers[i];
    if (b.kind == BufferKind::Arena) {
      if (b.arenaOffset + b.maxBytes > m.memory.arenaBytes)
        return Status::error(
            describeBuffer(b) + " [" + std::to_string(b.arenaOffset) + ", +" +
            std::to_string(b.maxBytes) + ") lies outside the arena of " +
            std::to_string(m.memory.arenaBytes) + " bytes");
      data[i] = arena + b.arenaOffset;
    } else if (b.kind == BufferKind::Param) {
      if (b.tensorIndex < 0 || size_t(b.tensorIndex) >= m.tensors.size())
        return Status::error(describeBuffer(b) + " refers to tensor " +
                             std::to_string(b.tensorIndex) + " of " +
                             std::to_string(m.tensors.size()));
      if (m.tensors[b.tensorIndex].dtype != b.dtype)
        return Status::error(describeBuffer(b) + " is " + dtypeName(b.dtype) +
                             " but its tensor '" +
                             m.tensors[b.tensorIndex].name + "' is " +
                             dtypeName(m.tensors[b.tensorIndex].dtype));
      data[i] = artifact.tensorData(b.tensorIndex);
    }
  }
  labels.resize(nb);
  for (size_t i = 0; i < nb; ++i)
    labels[i] = bufferLabel(m.buffers[i]);
  runTimeStorage.clear();
  runTimeStorage.resize(nb);
  const uint64_t ram = physicalMemoryBytes();
  for (size_t i = 0; i < nb; ++i)
    if (m.buffers[i].kind == BufferKind::Dynamic)
      runTimeStorage[i] = std::make_unique<cpu::RunTimeStorage>(ram);
  for (const IoSpec &io : m.inputs)
    if (io.buffer >= nb || m.buffers[io.buffer].kind != BufferKind::Input)
      return Status::error("model input '" + io.name +
                           "' is not bound to an Input buffer");
  for (const IoSpec &io : m.outputs)
    if (io.buffer >= nb)
      return Status::error("model output '" + io.name +
                           "' refers to a missing buffer");
  kernels.assign(m.steps.size(), nullptr);
  for (size_t s = 0; s < m.steps.size(); ++s) {
    const Step &step = m.steps[s];
    kernels[s] = cpu::findKernel(step.kernel);
    if (!kernels[s])
      return Status::error(describeStep(step, s) + ": unknown kernel '" +
                           step.kernel + "'; this runtime provides: " + [] {
                             std::string names;
                             for (const cpu::KernelInfo &k : cpu::allKernels())
                               names += (names.empty() ? "" : ", ") +
                                        std::string(k.name);
                             return names;
                           }());
    for (uint32_t id : step.inputs)
      if (id != kNoBuffer && id >= nb)
        return Status::error(describeStep(step, s) + " reads buffer #" +
                             std::to_string(id) + " of " + std::to_string(nb));
    for (uint32_t out : step.outputs) {
      if (out >= nb || (m.buffers[out].kind != BufferKind::Arena &&
                        m.buffers[out].kind != BufferKind::Dynamic))
        return Status::error(describeStep(step, s) +
                             " writes a buffer that is neither in the arena "
                             "nor sized at run time");
      if (kernels[s]->inPlace())
        continue;
      // Only in-place kernels may share memory with their inputs.
      const Buffer &ob = m.buffers[out];
      for (uint32_t in : step.inputs) {
        if (in == kNoBuffer || m.buffers[in].kind != BufferKind::Arena)
          continue;
        const Buffer &ib = m.buffers[in];
        if (concatHoldsInputInPlace(m, s, in))
          continue; // the kernel skips it
        if (ob.arenaOffset < ib.arenaOffset + ib.maxBytes &&
            ib.arenaOffset < ob.arenaOffset + ob.maxBytes && ob.maxBytes &&
            ib.maxBytes)
          return Status::error(describeStep(step, s) + " writes " +
                               describeBuffer(ob) + " over its input " +
                               describeBuffer(ib) + ", but '" + step.kernel +
                               "' is not an in-place kernel");
      }
    }
  }
  return placeConstantResults();
}

Status Executor::Impl::placeConstantResults() {
  const Manifest &m = artifact.manifest();
  constants = findConstantSteps(m);
  constantProgress.reset(m, constants);
  constantResults.clear();
  for (size_t b = 0; b < m.buffers.size(); ++b)
    constantResults.emplace_back(nullptr, std::free);
  for (size_t s = 0; s < m.steps.size(); ++s)
    if (constants.step[s])
      for (uint32_t out : m.steps[s].outputs) {
        const size_t bytes = (m.buffers[out].maxBytes + 63) / 64 * 64;
        constantResults[out].reset(
            static_cast<uint8_t *>(std::aligned_alloc(64, bytes ? bytes : 64)));
        if (!constantResults[out])
          return Status::error("cannot allocate " + std::to_string(bytes) +
                               " bytes for the result of " +
                               describeStep(m.steps[s], s) +
                               ", which reads only weights");
        data[out] = constantResults[out].get();
      }
  return Status::ok();
}

/// Once every constant step has run (a step in a branch may wait for a
/// run that takes it), results only other constant steps read are done.
void Executor::Impl::freeUnreadConstantResults() {
  if (constantsFreed || !constantProgress.allRan())
    return;
  constantsFreed = true;
  for (size_t b = 0; b < constantResults.size(); ++b)
    if (constantResults[b] && !constants.keep[b]) {
      constantResults[b].reset();
      data[b] = nullptr;
    }
}

Status Executor::Impl::bindInputs(const std::vector<NamedTensor> &inputs) {
  std::vector<size_t> ioIndex;
  if (Status s = validateInputs(artifact.manifest(), inputs, &ioIndex); !s)
    return s;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const IoSpec &io = artifact.manifest().inputs[ioIndex[i]];
    data[io.buffer] = inputs[i].tensor.data.data();
    shapes[io.buffer] = inputs[i].tensor.shape;
    known[io.buffer] = true;
  }
  return Status::ok();
}

Executor::Executor(const Artifact &artifact, ThreadPool &pool)
    : impl_(std::make_unique<Impl>(artifact, pool)) {
  if (!pool.status()) {
    impl_->planStatus = pool.status();
    return;
  }
  const uint64_t bytes = artifact.manifest().memory.arenaBytes;
  // Committed lazily: one beyond the machine would be OOM-killed mid-run.
  if (const uint64_t ram = physicalMemoryBytes(); bytes > ram) {
    impl_->planStatus = Status::error(
        "the activation arena of " + std::to_string(bytes) + " bytes (" +
        formatBytes(bytes) + ") is more than this machine's " +
        formatBytes(ram) + " of physical memory");
    return;
  }
  if (bytes) {
    // Anonymous mapping: page aligned, zero-filled, committed on first touch.
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      impl_->planStatus = Status::error(
          "cannot allocate the activation arena of " + std::to_string(bytes) +
          " bytes: " + std::strerror(errno));
      return;
    }
    impl_->arena = static_cast<uint8_t *>(p);
    impl_->arenaMapped = bytes;
  }
  impl_->planStatus = impl_->checkPlan();
}

Executor::~Executor() {
  if (impl_->arena)
    munmap(impl_->arena, impl_->arenaMapped);
}

void Executor::setKvCache(const KvCacheView *view) { impl_->kvCache = view; }

void Executor::setProfiler(StepProfiler *profiler) {
  impl_->profiler = profiler;
}

uint64_t Executor::constantResultBytes() const {
  return impl_->constants.bytes;
}

Status Executor::run(const std::vector<NamedTensor> &inputs,
                     std::vector<NamedTensor> *outputs) {
  Impl &im = *impl_;
  if (!im.planStatus)
    return Status::error("cannot run '" + im.artifact.path() +
                         "': " + im.planStatus.message());
  const Manifest &m = im.artifact.manifest();
  im.shapes.assign(m.buffers.size(), {});
  im.known.assign(m.buffers.size(), false);
  for (const Buffer &b : m.buffers)
    if (b.kind == BufferKind::Param) {
      im.shapes[b.id] = m.tensors[b.tensorIndex].shape;
      im.known[b.id] = true;
    }
  if (Status s = im.bindInputs(inputs); !s)
    return s;
  ScopedFloatControl flushDenormals(true); // exec/FloatEnvironment.h
  // The run's span covers the steps only: validation and the output copies
  // are not engine-step work a kernel could be blamed for.
  im.profiledRun = im.profiler ? im.profiler->beginRun() : -1;
  im.constantProgress.restore(im.shapes, im.known);
  // Control-flow steps skip forward (the validator bounds their counts).
  for (size_t i = 0; i < m.steps.size(); ++i) {
    if (im.constantProgress.ran(i))
      continue;
    int64_t skip = 0;
    if (Status s = im.runStep(i, &skip); !s) {
      if (im.profiler)
        im.profiler->endRun(im.profiledRun);
      return s;
    }
    im.constantProgress.note(m, im.constants, i, im.shapes);
    i += size_t(std::min<int64_t>(skip, int64_t(m.steps.size() - i)));
  }
  im.freeUnreadConstantResults();
  if (im.profiler)
    im.profiler->endRun(im.profiledRun);
  // Into the caller's tensors of the last run where there are some: a
  // serving loop's logits then reuse their memory step after step.
  outputs->resize(m.outputs.size());
  for (const IoSpec &io : m.outputs) {
    if (!im.known[io.buffer])
      return Status::error("model output '" + io.name + "' (" +
                           describeBuffer(m.buffers[io.buffer]) +
                           ") was never written by the plan");
    if (Status s = checkOutputShape(io, im.shapes[io.buffer]); !s)
      return s;
    NamedTensor &nt = (*outputs)[size_t(&io - m.outputs.data())];
    nt.name = io.name;
    nt.tensor.dtype = m.buffers[io.buffer].dtype;
    nt.tensor.shape = im.shapes[io.buffer];
    const size_t bytes = size_t(shape::numElements(nt.tensor.shape)) *
                         dtypeSize(nt.tensor.dtype);
    const uint8_t *src = im.data[io.buffer];
    nt.tensor.data.assign(src, src + bytes);
  }
  // Input buffers point at the caller's tensors only for this run.
  for (const IoSpec &io : m.inputs)
    im.data[io.buffer] = nullptr;
  return Status::ok();
}

} // namespace ingot
