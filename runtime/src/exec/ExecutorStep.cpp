//===- ExecutorStep.cpp - One step of the executor's plan ----------------===//
//
// Binds a step's operands (buffers' data, runtime shapes, names) into a
// kernel context, runs the kernel, and records the shapes it set.
//
//===----------------------------------------------------------------------===//

#include "exec/ExecutorImpl.h"
#include "exec/ExecutorMessages.h"
#include "exec/KernelCost.h"

namespace ingot {
namespace {

/// Lends the executor's operand records to a step's context for its run.
class LentOperands {
public:
  LentOperands(cpu::KernelContext &ctx, std::vector<cpu::KernelInput> &in,
               std::vector<cpu::KernelOutput> &out)
      : ctx_(ctx), in_(in), out_(out) {
    ctx_.inputs.swap(in_);
    ctx_.outputs.swap(out_);
  }
  ~LentOperands() {
    ctx_.inputs.swap(in_);
    ctx_.outputs.swap(out_);
  }
  LentOperands(const LentOperands &) = delete;
  LentOperands &operator=(const LentOperands &) = delete;

private:
  cpu::KernelContext &ctx_;
  std::vector<cpu::KernelInput> &in_;
  std::vector<cpu::KernelOutput> &out_;
};

} // namespace

Status Executor::Impl::runStep(size_t index, int64_t *skip) {
  const Manifest &m = artifact.manifest();
  const Step &step = m.steps[index];
  cpu::KernelContext ctx(kernels[index], step.kernel, step.origin, &step.attrs,
                         &pool);
  ctx.setKvCache(kvCache);
  if (stepCaches.size() != m.steps.size())
    stepCaches.resize(m.steps.size());
  if (!stepCaches[index])
    stepCaches[index] = std::make_unique<cpu::StepCache>();
  ctx.setStepCache(stepCaches[index].get());
  const LentOperands lent(ctx, inputScratch, outputScratch);
  // Every field is set: the records hold the last step's operands.
  ctx.inputs.resize(step.inputs.size());
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const uint32_t id = step.inputs[i];
    cpu::KernelInput &in = ctx.inputs[i];
    in.present = id != kNoBuffer;
    in.data = nullptr;
    in.dtype = DType::F32;
    in.shape.clear();
    in.name.clear();
    in.groupSize = 0;
    in.layout = "row-major";
    in.constant = false;
    if (id == kNoBuffer)
      continue;
    const Buffer &b = m.buffers[id];
    if (!known[id])
      return Status::error(describeStep(step, index) + " reads " +
                           describeBuffer(b) + " before any step wrote it");
    in.data = data[id];
    in.dtype = b.dtype;
    in.shape = shapes[id];
    in.name = labels[id];
    if (b.kind == BufferKind::Param) {
      const TensorEntry &t = m.tensors[b.tensorIndex];
      in.groupSize = t.groupSize;
      if (!t.layout.empty())
        in.layout = t.layout;
    }
    in.constant = constants.buffer[id];
  }
  ctx.outputs.resize(step.outputs.size());
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const Buffer &b = m.buffers[step.outputs[i]];
    cpu::KernelOutput &out = ctx.outputs[i];
    out.data = const_cast<uint8_t *>(data[b.id]);
    out.storage = nullptr;
    out.dtype = b.dtype;
    out.capacityBytes = b.maxBytes;
    if (cpu::RunTimeStorage *st = runTimeStorage[b.id].get()) {
      out.storage = st;
      out.data = st->data();
      out.capacityBytes = st->capacity();
    }
    out.maxShape = b.maxShape;
    out.shape.clear();
    out.shapeSet = false;
    out.name = labels[b.id];
  }
  const double startUs = profiler ? profiler->nowUs() : 0.0;
  if (Status s = kernels[index]->fn(ctx); !s)
    return s;
  *skip = ctx.skipSteps();
  if (profiler) {
    KernelEvent e;
    e.durUs = profiler->nowUs() - startUs; // before the estimate below
    e.startUs = startUs;
    e.run = profiledRun;
    e.stepIndex = int32_t(index);
    e.kernel = step.kernel;
    e.origin = step.origin;
    const KernelCost cost = estimateKernelCost(ctx);
    e.bytes = cost.bytes;
    e.flops = cost.flops;
    profiler->kernel(e);
  }
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    if (!ctx.outputs[i].shapeSet)
      return ctx.error("did not set the shape of output " + std::to_string(i));
    // Copied, not moved: both vectors keep their capacity.
    shapes[step.outputs[i]] = ctx.outputs[i].shape;
    known[step.outputs[i]] = true;
    if (runTimeStorage[step.outputs[i]])
      data[step.outputs[i]] = static_cast<uint8_t *>(ctx.outputs[i].data);
  }
  return Status::ok();
}

} // namespace ingot
