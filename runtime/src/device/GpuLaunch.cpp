//===- GpuLaunch.cpp - A GPU target's table turned into launches ----------===//
#include "device/GpuLaunch.h"

#include <algorithm>
#include <cstdlib>

namespace ingot::gpu {
namespace {

/// "sm_90" -> (9, 0); false for names that are not sm_<digits>.
bool parseSm(const std::string &arch, int *major, int *minor) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return false;
  for (size_t i = 3; i < arch.size(); ++i)
    if (arch[i] < '0' || arch[i] > '9')
      return false;
  const int n = std::atoi(arch.c_str() + 3);
  *major = n / 10, *minor = n % 10;
  return true;
}

uint64_t product(const shape::Shape &s, size_t from) {
  uint64_t n = 1;
  for (size_t i = from; i < s.size(); ++i)
    n *= static_cast<uint64_t>(s[i]);
  return n;
}

} // namespace

uint64_t broadcastStride(const shape::Shape &in, const shape::Shape &out,
                         size_t axis) {
  const size_t lead = out.size() - in.size(); // output axes in lacks
  if (axis < lead)
    return 0;
  const size_t j = axis - lead;
  if (in[j] == 1 && out[axis] != 1)
    return 0;
  return product(in, j + 1);
}

/// Blocks along one grid dimension.
uint64_t gridExtent(const GpuGridDim &d,
                    const std::vector<shape::Shape> &shapes) {
  if (d.operand == GpuGridDim::kGridConstant)
    return d.extent;
  const uint64_t n = product(shapes[d.operand], 0);
  return (n + d.divisor - 1) / d.divisor;
}

Status evaluateLaunch(const GpuKernel &kernel, const Step &step,
                      const std::vector<shape::Shape> &shapes,
                      const std::vector<uint64_t> &addresses,
                      const KvAddresses &kv, Launch *out) {
  const size_t operands = step.inputs.size() + step.outputs.size();
  if (shapes.size() != operands || addresses.size() != operands ||
      step.outputs.empty())
    return Status::error("kernel '" + kernel.symbol + "': " +
                         std::to_string(operands) + " operands expected");
  const shape::Shape &first = shapes[step.inputs.size()];
  Launch launch;
  for (const GpuArg &a : kernel.args) {
    if (a.kind == GpuArg::Kind::KvKeys || a.kind == GpuArg::Kind::KvValues) {
      const std::vector<uint64_t> &layers =
          a.kind == GpuArg::Kind::KvKeys ? kv.keys : kv.values;
      if (a.axis >= layers.size())
        return Status::error("kernel '" + kernel.symbol +
                             "' reads the KV cache of layer " +
                             std::to_string(a.axis) + ", which is not there");
      launch.params.push_back(layers[a.axis]);
      continue;
    }
    const shape::Shape &s = shapes[a.operand];
    if (a.kind == GpuArg::Kind::Dim && a.axis >= s.size())
      return Status::error("kernel '" + kernel.symbol + "': operand " +
                           std::to_string(a.operand) + " has no axis " +
                           std::to_string(a.axis));
    switch (a.kind) {
    case GpuArg::Kind::Pointer:
      launch.params.push_back(addresses[a.operand]);
      break;
    case GpuArg::Kind::Numel:
      launch.params.push_back(product(s, 0));
      break;
    case GpuArg::Kind::Dim:
      launch.params.push_back(static_cast<uint64_t>(s[a.axis]));
      break;
    case GpuArg::Kind::BroadcastStride:
      if (s.size() > first.size())
        return Status::error("kernel '" + kernel.symbol + "': input " +
                             std::to_string(a.operand) + " " +
                             shape::toString(s) + " does not broadcast to " +
                             shape::toString(first));
      launch.params.push_back(broadcastStride(s, first, a.axis));
      break;
    case GpuArg::Kind::KvKeys:
    case GpuArg::Kind::KvValues:
      break; // handled above
    }
  }
  if (kernel.grid.empty()) {
    const uint64_t n = product(shapes[kernel.gridOperand], 0);
    launch.grid[0] = (n + kernel.blockX - 1) / kernel.blockX;
  }
  for (size_t d = 0; d < kernel.grid.size() && d < 3; ++d)
    launch.grid[d] = gridExtent(kernel.grid[d], shapes);
  *out = std::move(launch);
  return Status::ok();
}

Status chooseCodeObjects(const GpuTarget &target, int major, int minor,
                         const std::string &deviceName,
                         std::vector<size_t> *indices) {
  int bestMinor = -1, ptxSm = -1;
  size_t cubin = 0;
  std::string built;
  for (size_t i = 0; i < target.objects.size(); ++i) {
    const CodeObject &c = target.objects[i];
    int ma = 0, mi = 0;
    if (!parseSm(c.arch, &ma, &mi))
      continue;
    if (c.format == CodeObject::Format::Ptx) {
      if (ma * 10 + mi <= major * 10 + minor)
        ptxSm = std::max(ptxSm, ma * 10 + mi);
      continue;
    }
    built += (built.empty() ? "" : ", ") + c.arch;
    // A cubin runs on its own major at an equal or higher minor.
    if (ma == major && mi <= minor && mi > bestMinor)
      bestMinor = mi, cubin = i;
  }
  indices->clear();
  if (bestMinor >= 0) {
    indices->push_back(cubin);
    return Status::ok();
  }
  for (size_t i = 0; ptxSm >= 0 && i < target.objects.size(); ++i) {
    const CodeObject &c = target.objects[i];
    int ma = 0, mi = 0;
    if (c.format == CodeObject::Format::Ptx && parseSm(c.arch, &ma, &mi) &&
        ma * 10 + mi == ptxSm)
      indices->push_back(i);
  }
  if (!indices->empty())
    return Status::ok();
  const std::string sm = "sm_" + std::to_string(major * 10 + minor);
  return Status::error("built for " + (built.empty() ? "no CUDA GPU" : built) +
                       "; this device is " + sm + " (" + deviceName +
                       "): recompile with --target cuda:" + sm);
}

} // namespace ingot::gpu
