//===- GpuLaunch.h - A GPU target's table turned into launches --*- C++ -*-===//
//
// What the runtime computes from the manifest's GPU kernel table and the
// shapes of one run, independent of the vendor API: each kernel's
// parameters and grid, and which code object a device can load. Pure
// functions, so that a machine without a GPU tests them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/ShapeRules.h"
#include "ingot/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::gpu {

/// One launch: the kernel's parameters in order (device addresses and
/// sizes, all 8 bytes) and the grid; a grid with a 0 means nothing to
/// compute.
struct Launch {
  std::vector<uint64_t> params;
  uint64_t grid[3] = {0, 1, 1};
  bool empty() const { return grid[0] == 0 || grid[1] == 0 || grid[2] == 0; }
};

/// Device addresses of each layer's key and value caches (empty for
/// models without one).
struct KvAddresses {
  std::vector<uint64_t> keys, values;
};

/// `shapes` and `addresses` per operand of `step`: its inputs, then its
/// outputs (an absent optional has an empty shape and address 0).
Status evaluateLaunch(const GpuKernel &kernel, const Step &step,
                      const std::vector<shape::Shape> &shapes,
                      const std::vector<uint64_t> &addresses,
                      const KvAddresses &kv, Launch *out);

/// The element stride of an input of shape `in` along axis `axis` of the
/// output shape `out`, numpy broadcasting (right-aligned; 0 along an axis
/// the input broadcasts).
uint64_t broadcastStride(const shape::Shape &in, const shape::Shape &out,
                         size_t axis);

/// The code objects of `target` a device of compute capability
/// major.minor loads: the cubin of the same major with the highest minor
/// not above the device's, else the PTX objects of the newest architecture
/// not newer than the device. Refuses, naming what was built and what was
/// found.
Status chooseCodeObjects(const GpuTarget &target, int major, int minor,
                         const std::string &deviceName,
                         std::vector<size_t> *indices);

} // namespace ingot::gpu
