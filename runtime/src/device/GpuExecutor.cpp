//===- GpuExecutor.cpp - Runs an artifact's plan on a GPU -----------------===//
//
// Buffers map to device memory as the manifest places them on the CPU: one
// weight region laid out like the weight section, one arena at the
// planner's offsets, one region per model input, and one K and one V array
// per layer for the paged cache. Output shapes come from GpuShapes.h before
// each step's launches, since a kernel cannot report them.
//
//===----------------------------------------------------------------------===//
#include "ingot/GpuExecutor.h"
#include "device/GpuLaunch.h"
#include "device/GpuShapes.h"

#include "ingot/Profiler.h"
#include "ingot/ShapeRules.h"

namespace ingot {
using gpu::byteSize;

namespace {

const GpuTarget *findTarget(const Manifest &m, const std::string &name) {
  for (const GpuTarget &t : m.gpuTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

} // namespace

bool gpuCoversPlan(const Manifest &m, const std::string &target,
                   std::string *why) {
  const GpuTarget *t = findTarget(m, target);
  for (const Buffer &b : m.buffers)
    if (b.kind == BufferKind::Dynamic) {
      // Device memory is planned once; a value-sized result has no bound.
      *why = "buffer '" + b.name + "' is sized at run time, and a " + target +
             " plan needs every buffer bounded at compile time";
      return false;
    }
  std::vector<bool> has(m.steps.size(), false);
  if (t)
    for (const GpuKernel &k : t->kernels)
      if (k.step < has.size())
        has[k.step] = true;
  size_t covered = 0;
  std::string firstMissing;
  for (size_t i = 0; i < has.size(); ++i) {
    if (has[i] && gpu::hasGpuShapeRule(m.steps[i].kernel))
      ++covered;
    else if (firstMissing.empty())
      firstMissing =
          "'" + m.steps[i].kernel + "' from '" + m.steps[i].origin + "'";
  }
  if (t && covered == m.steps.size())
    return true;
  *why =
      "its " + target + " code covers " + std::to_string(covered) + " of " +
      std::to_string(m.steps.size()) + " steps" +
      (firstMissing.empty() ? ""
                            : " (the first without one: " + firstMissing + ")");
  return false;
}

uint64_t GpuExecutor::kvBytesPerBlock(const Manifest &m) {
  const LlmConfig &c = m.llm;
  return uint64_t(2 * c.numLayers * c.blockSize * c.numKvHeads * c.headDim) *
         sizeof(float);
}

struct GpuExecutor::Impl {
  const Artifact *art = nullptr;
  std::unique_ptr<Device> dev;
  const GpuTarget *target = nullptr;
  std::vector<void *> kernels;                  // per table entry
  std::vector<std::vector<size_t>> stepKernels; // table entries per step
  uint64_t weights = 0, arena = 0;
  std::vector<uint64_t> inputs; // per model input
  gpu::KvAddresses kv;
  StepProfiler *profiler = nullptr;
  int64_t profiledRun = -1;

  /// Reports [startUs, now) as one kernel event of the profiled run.
  void report(double startUs, int32_t step, std::string kernel,
              std::string origin) const;
  Status runSteps(std::vector<shape::Shape> *shapes);
  Status run(const std::vector<NamedTensor> &given,
             std::vector<shape::Shape> *shapes,
             std::vector<NamedTensor> *outputs);

  Status upload();
  uint64_t address(uint32_t id) const;
  Status bindInputs(const std::vector<NamedTensor> &given,
                    std::vector<shape::Shape> *shapes);
  Status runStep(size_t i, std::vector<shape::Shape> *shapes);
};

Status GpuExecutor::Impl::upload() {
  const Manifest &m = art->manifest();
  uint64_t weightBytes = 0;
  for (const TensorEntry &t : m.tensors)
    weightBytes = std::max(weightBytes, t.offset + t.bytes);
  if (Status s = dev->allocate(weightBytes, &weights); !s)
    return s;
  for (size_t i = 0; i < m.tensors.size(); ++i)
    if (Status s = dev->upload(weights + m.tensors[i].offset,
                               art->tensorData(i), m.tensors[i].bytes);
        !s)
      return s;
  if (Status s = dev->allocate(m.memory.arenaBytes, &arena); !s)
    return s;
  for (const IoSpec &io : m.inputs) {
    const Buffer &b = m.buffers[io.buffer];
    uint64_t &address = inputs.emplace_back();
    if (Status s = dev->allocate(byteSize(b.maxShape, b.dtype), &address); !s)
      return s;
  }
  return Status::ok();
}

uint64_t GpuExecutor::Impl::address(uint32_t id) const {
  if (id == kNoBuffer)
    return 0;
  const Manifest &m = art->manifest();
  const Buffer &b = m.buffers[id];
  switch (b.kind) {
  case BufferKind::Input:
    return inputs[static_cast<size_t>(b.ioIndex)];
  case BufferKind::Param:
    return weights + m.tensors[static_cast<size_t>(b.tensorIndex)].offset;
  case BufferKind::Arena:
    return arena + b.arenaOffset;
  case BufferKind::Dynamic: // refused by gpuCoversPlan
    return 0;
  }
  return 0;
}

Status GpuExecutor::Impl::bindInputs(const std::vector<NamedTensor> &given,
                                     std::vector<shape::Shape> *shapes) {
  const Manifest &m = art->manifest();
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const IoSpec &io = m.inputs[i];
    const Buffer &b = m.buffers[io.buffer];
    const NamedTensor *t = nullptr;
    for (const NamedTensor &g : given)
      if (g.name == io.name)
        t = &g;
    if (!t)
      return Status::error("missing input '" + io.name + "'");
    const HostTensor &h = t->tensor;
    bool fits = h.dtype == io.dtype && h.shape.size() == io.dims.size();
    for (size_t d = 0; fits && d < h.shape.size(); ++d)
      fits = h.shape[d] >= 0 && h.shape[d] <= b.maxShape[d] &&
             (io.dims[d].size < 0 || io.dims[d].size == h.shape[d]);
    if (!fits || h.data.size() != byteSize(h.shape, h.dtype))
      return Status::error("input '" + io.name + "' is " + dtypeName(h.dtype) +
                           " " + shape::toString(h.shape) +
                           "; the model takes " + dtypeName(io.dtype) +
                           " within " + shape::toString(b.maxShape));
    (*shapes)[io.buffer] = h.shape;
    if (Status s = dev->upload(inputs[i], h.data.data(), h.data.size()); !s)
      return s;
  }
  return Status::ok();
}

Status GpuExecutor::Impl::runStep(size_t i, std::vector<shape::Shape> *shapes) {
  const Manifest &m = art->manifest();
  const Step &step = m.steps[i];
  const std::string where = "step " + std::to_string(i) + " ('" + step.kernel +
                            "' from '" + step.origin + "')";
  std::vector<shape::Shape> ins, outs, operands;
  std::vector<uint64_t> addresses;
  for (uint32_t id : step.inputs) {
    ins.push_back(id == kNoBuffer ? shape::Shape() : (*shapes)[id]);
    addresses.push_back(address(id));
  }
  if (Status s = gpu::gpuOutputShapes(m, step, ins, &outs); !s)
    return Status::error(where + ": " + s.message());
  operands = ins;
  for (size_t o = 0; o < step.outputs.size(); ++o) {
    (*shapes)[step.outputs[o]] = outs[o];
    operands.push_back(outs[o]);
    addresses.push_back(address(step.outputs[o]));
  }
  for (size_t entry : stepKernels[i]) {
    const GpuKernel &k = target->kernels[entry];
    gpu::Launch launch;
    if (Status s =
            gpu::evaluateLaunch(k, step, operands, addresses, kv, &launch);
        !s)
      return Status::error(where + ": " + s.message());
    if (launch.empty())
      continue;
    if (Status s = dev->launch(kernels[entry], launch.grid, k.blockX,
                               k.sharedBytes, launch.params);
        !s)
      return Status::error(where + ": " + s.message());
  }
  return Status::ok();
}

Status openGpuExecutor(const Artifact &artifact, const DeviceRequest &req,
                       std::unique_ptr<GpuExecutor> *gpu, std::string *note) {
  const bool wanted = req.kind == DeviceRequest::Kind::Cuda;
  if (req.kind == DeviceRequest::Kind::Cpu ||
      (!wanted && artifact.manifest().gpuTargets.empty()))
    return Status::ok();
  std::unique_ptr<Device> device;
  Status s = openCudaDevice(req.ordinal, &device);
  std::string why;
  if (s && !wanted && !gpuCoversPlan(artifact.manifest(), "cuda", &why)) {
    *note = "running on the CPU: " + why;
    return Status::ok();
  }
  if (s)
    s = GpuExecutor::create(artifact, std::move(device), gpu);
  if (!s && !wanted) {
    *note = "running on the CPU: " + s.message();
    return Status::ok();
  }
  if (s)
    *note = "running on " + (*gpu)->device().description();
  return s;
}

void GpuExecutor::Impl::report(double startUs, int32_t step, std::string kernel,
                               std::string origin) const {
  KernelEvent e;
  e.run = profiledRun;
  e.stepIndex = step;
  e.kernel = std::move(kernel);
  e.origin = std::move(origin);
  e.startUs = startUs;
  e.durUs = profiler->nowUs() - startUs;
  profiler->kernel(e); // bytes and FLOPs: the CPU's estimates need a context
}

Status GpuExecutor::Impl::runSteps(std::vector<shape::Shape> *shapes) {
  const Manifest &m = art->manifest();
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const double startUs = profiler ? profiler->nowUs() : 0.0;
    if (Status s = runStep(i, shapes); !s)
      return s;
    if (!profiler)
      continue;
    if (Status s = dev->synchronize(); !s)
      return s;
    report(startUs, int32_t(i), m.steps[i].kernel, m.steps[i].origin);
  }
  return dev->synchronize();
}

GpuExecutor::GpuExecutor() : impl_(std::make_unique<Impl>()) {}
void GpuExecutor::setProfiler(StepProfiler *profiler) {
  impl_->profiler = profiler;
}
GpuExecutor::~GpuExecutor() = default;
const Device &GpuExecutor::device() const { return *impl_->dev; }

Status GpuExecutor::create(const Artifact &artifact,
                           std::unique_ptr<Device> device,
                           std::unique_ptr<GpuExecutor> *out) {
  const Manifest &m = artifact.manifest();
  const std::string &name = device->targetName();
  int major = 0, minor = 0;
  device->computeCapability(&major, &minor);
  const GpuTarget *target = findTarget(m, name);
  std::string why;
  if (!target)
    return Status::error(artifact.path() + " has no " + name +
                         " code: " + "recompile with --target " + name +
                         ":sm_" + std::to_string(major * 10 + minor));
  if (!gpuCoversPlan(m, name, &why))
    return Status::error(artifact.path() + ": " + why);
  std::vector<size_t> objects;
  if (Status s = gpu::chooseCodeObjects(*target, major, minor,
                                        device->productName(), &objects);
      !s)
    return Status::error(artifact.path() + ": " + s.message());
  std::unique_ptr<GpuExecutor> e(new GpuExecutor());
  Impl &x = *e->impl_;
  x.art = &artifact, x.dev = std::move(device), x.target = target;
  for (size_t object : objects) {
    const CodeObject &c = target->objects[object];
    if (Status s = x.dev->loadModule(c, artifact.codeObjectData(*target, c));
        !s)
      return s;
  }
  x.stepKernels.resize(m.steps.size());
  for (size_t i = 0; i < target->kernels.size(); ++i) {
    const GpuKernel &k = target->kernels[i];
    x.stepKernels[k.step].push_back(i);
    if (Status s = x.dev->kernel(k.symbol, &x.kernels.emplace_back()); !s)
      return s;
  }
  if (Status s = x.upload(); !s)
    return s;
  *out = std::move(e);
  return Status::ok();
}

Status GpuExecutor::kvBlocksThatFit(double fraction, int64_t *blocks) {
  Impl &x = *impl_;
  const Manifest &m = x.art->manifest();
  uint64_t free = 0, total = 0;
  if (Status s = x.dev->memoryInfo(&free, &total); !s)
    return s;
  // The budget is a share of all memory; what is in use already (ours and
  // anyone else's) comes off it.
  const double budget = fraction * double(total) - double(total - free);
  const uint64_t perBlock = kvBytesPerBlock(m);
  *blocks = budget > 0 && perBlock ? int64_t(budget / double(perBlock)) : 0;
  if (*blocks < 1)
    return Status::error(x.dev->description() + ": no room for a KV cache: " +
                         std::to_string(free >> 20) + " MiB free of " +
                         std::to_string(total >> 20) + " MiB, a block takes " +
                         std::to_string(perBlock) +
                         " bytes (raise "
                         "--gpu-memory-fraction)");
  return Status::ok();
}

Status GpuExecutor::allocateKvCache(int64_t numBlocks, DType dtype) {
  Impl &x = *impl_;
  const Manifest &m = x.art->manifest();
  if (!m.hasLlm)
    return Status::error(x.art->path() + " is not a language model: no KV "
                                         "cache to allocate");
  if (dtype != DType::F32)
    return Status::error(std::string("the GPU executor keeps an f32 KV "
                                     "cache only, not ") +
                         dtypeName(dtype) +
                         " (use --kv-cache-dtype float32 or --device cpu)");
  if (numBlocks <= 0)
    return Status::error("a KV cache needs at least one block");
  const uint64_t layerBytes =
      kvBytesPerBlock(m) / uint64_t(2 * m.llm.numLayers) * uint64_t(numBlocks);
  x.kv = {};
  for (int64_t l = 0; l < m.llm.numLayers; ++l)
    for (std::vector<uint64_t> *side : {&x.kv.keys, &x.kv.values})
      if (Status s = x.dev->allocate(layerBytes, &side->emplace_back()); !s)
        return Status::error("KV cache of " + std::to_string(numBlocks) +
                             " blocks: " + s.message());
  return Status::ok();
}

Status GpuExecutor::run(const std::vector<NamedTensor> &inputs,
                        std::vector<NamedTensor> *outputs) {
  Impl &x = *impl_;
  const Manifest &m = x.art->manifest();
  std::vector<shape::Shape> shapes(m.buffers.size());
  for (const Buffer &b : m.buffers)
    if (b.kind == BufferKind::Param)
      shapes[b.id] = b.maxShape;
  x.profiledRun = x.profiler ? x.profiler->beginRun() : -1;
  Status s = x.run(inputs, &shapes, outputs);
  if (x.profiler)
    x.profiler->endRun(x.profiledRun);
  return s;
}

Status GpuExecutor::Impl::run(const std::vector<NamedTensor> &given,
                              std::vector<shape::Shape> *shapesOut,
                              std::vector<NamedTensor> *outputs) {
  const Manifest &m = art->manifest();
  std::vector<shape::Shape> &shapes = *shapesOut;
  double startUs = profiler ? profiler->nowUs() : 0.0;
  if (Status s = bindInputs(given, &shapes); !s)
    return s;
  if (profiler)
    report(startUs, -1, "copy-to-device", "inputs");
  if (Status s = runSteps(&shapes); !s)
    return s;
  startUs = profiler ? profiler->nowUs() : 0.0;
  // Into the caller's tensors of the last run where there are some: a
  // serving loop's logits then reuse their memory (no page faults and no
  // zero fill of vocab-sized rows per step).
  outputs->resize(m.outputs.size());
  for (const IoSpec &io : m.outputs) {
    const Buffer &b = m.buffers[io.buffer];
    NamedTensor &t = (*outputs)[size_t(&io - m.outputs.data())];
    t.name = io.name;
    t.tensor.dtype = b.dtype;
    t.tensor.shape = shapes[io.buffer];
    t.tensor.data.resize(byteSize(t.tensor.shape, b.dtype));
    if (Status s = dev->download(t.tensor.data.data(), address(io.buffer),
                                 t.tensor.data.size());
        !s)
      return s;
  }
  if (profiler)
    report(startUs, -1, "copy-to-host", "outputs");
  return Status::ok();
}

} // namespace ingot
