//===- GpuExecutor.cpp - Runs an artifact's plan on a GPU -----------------===//
//
// Buffers map to device memory as the manifest places them on the CPU: one
// weight region laid out like the weight section, one arena at the
// planner's offsets, one region per model input. Output shapes follow the
// kernels' shape rules (format/include/ingot/ShapeRules.h): every kernel a
// GPU target holds today is elementwise, its output the broadcast of its
// inputs; a step of another kernel is refused until its family brings its
// rule here.
//
//===----------------------------------------------------------------------===//
#include "ingot/GpuExecutor.h"
#include "device/GpuLaunch.h"

#include "ingot/ShapeRules.h"

#include <set>

namespace ingot {
namespace {

const GpuTarget *findTarget(const Manifest &m, const std::string &name) {
  for (const GpuTarget &t : m.gpuTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

bool isElementwiseKernel(const std::string &k) {
  static const std::set<std::string> names = {"fused_elementwise",
                                              "add",
                                              "sub",
                                              "mul",
                                              "div",
                                              "pow",
                                              "sqrt",
                                              "neg",
                                              "exp",
                                              "erf",
                                              "tanh",
                                              "sigmoid",
                                              "relu",
                                              "unary_math",
                                              "binary_math"};
  return names.count(k) != 0;
}

uint64_t byteSize(const shape::Shape &s, DType t) {
  uint64_t n = dtypeSize(t);
  for (int64_t d : s)
    n *= static_cast<uint64_t>(d);
  return n;
}

} // namespace

bool gpuCoversPlan(const Manifest &m, const std::string &target,
                   std::string *why) {
  const GpuTarget *t = findTarget(m, target);
  const size_t covered = t ? t->kernels.size() : 0;
  if (covered == m.steps.size() && t)
    return true;
  *why = "its " + target + " code covers " + std::to_string(covered) + " of " +
         std::to_string(m.steps.size()) +
         " steps (GEMM, attention and norm kernels for GPUs are not built "
         "yet)";
  return false;
}

struct GpuExecutor::Impl {
  const Artifact *art = nullptr;
  std::unique_ptr<Device> dev;
  const GpuTarget *target = nullptr;
  std::vector<void *> kernels; // per table entry, which is per step
  uint64_t weights = 0, arena = 0;
  std::vector<uint64_t> inputs; // per model input

  Status upload();
  uint64_t address(const Buffer &b) const;
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

uint64_t GpuExecutor::Impl::address(const Buffer &b) const {
  const Manifest &m = art->manifest();
  switch (b.kind) {
  case BufferKind::Input:
    return inputs[static_cast<size_t>(b.ioIndex)];
  case BufferKind::Param:
    return weights + m.tensors[static_cast<size_t>(b.tensorIndex)].offset;
  case BufferKind::Arena:
    return arena + b.arenaOffset;
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
  const GpuKernel &k = target->kernels[i];
  const std::string where = "step " + std::to_string(i) + " ('" + step.kernel +
                            "' from '" + step.origin + "')";
  if (!isElementwiseKernel(step.kernel) || step.outputs.size() != 1)
    return Status::error(where + ": no GPU shape rule for this kernel");
  std::vector<shape::Shape> operands, ins;
  std::vector<uint64_t> addresses;
  for (uint32_t id : step.inputs) {
    operands.push_back(id == kNoBuffer ? shape::Shape() : (*shapes)[id]);
    addresses.push_back(id == kNoBuffer ? 0 : address(m.buffers[id]));
    if (id != kNoBuffer)
      ins.push_back((*shapes)[id]);
  }
  shape::Shape out;
  std::string error;
  if (!shape::broadcast(ins, &out, &error))
    return Status::error(where + ": " + error);
  const Buffer &ob = m.buffers[step.outputs[0]];
  if (out.size() != ob.rank || byteSize(out, ob.dtype) > ob.maxBytes)
    return Status::error(where + ": output " + shape::toString(out) +
                         " exceeds its compiled bound " +
                         shape::toString(ob.maxShape));
  (*shapes)[step.outputs[0]] = out;
  operands.push_back(out);
  addresses.push_back(address(ob));
  gpu::Launch launch;
  if (Status s = gpu::evaluateLaunch(k, step, operands, addresses, &launch); !s)
    return Status::error(where + ": " + s.message());
  if (launch.gridX == 0)
    return Status::ok();
  return dev->launch(kernels[i], launch.gridX, k.blockX, k.sharedBytes,
                     launch.params);
}

GpuExecutor::GpuExecutor() : impl_(std::make_unique<Impl>()) {}
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
  size_t object = 0;
  if (Status s = gpu::chooseCodeObject(*target, major, minor,
                                       device->productName(), &object);
      !s)
    return Status::error(artifact.path() + ": " + s.message());
  std::unique_ptr<GpuExecutor> e(new GpuExecutor());
  Impl &x = *e->impl_;
  x.art = &artifact, x.dev = std::move(device), x.target = target;
  const CodeObject &c = target->objects[object];
  if (Status s = x.dev->loadModule(c, artifact.codeObjectData(*target, c)); !s)
    return s;
  for (const GpuKernel &k : target->kernels)
    if (Status s = x.dev->kernel(k.symbol, &x.kernels.emplace_back()); !s)
      return s;
  if (Status s = x.upload(); !s)
    return s;
  *out = std::move(e);
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
  if (Status s = x.bindInputs(inputs, &shapes); !s)
    return s;
  for (size_t i = 0; i < m.steps.size(); ++i)
    if (Status s = x.runStep(i, &shapes); !s)
      return s;
  if (Status s = x.dev->synchronize(); !s)
    return s;
  outputs->clear();
  for (const IoSpec &io : m.outputs) {
    const Buffer &b = m.buffers[io.buffer];
    NamedTensor &t = outputs->emplace_back();
    t.name = io.name;
    t.tensor.dtype = b.dtype;
    t.tensor.shape = shapes[io.buffer];
    t.tensor.data.resize(byteSize(t.tensor.shape, b.dtype));
    if (Status s = x.dev->download(t.tensor.data.data(), x.address(b),
                                   t.tensor.data.size());
        !s)
      return s;
  }
  return Status::ok();
}

} // namespace ingot
