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
/// sizes, all 8 bytes) and grid.x; gridX 0 means nothing to compute.
struct Launch {
  std::vector<uint64_t> params;
  uint64_t gridX = 0;
};

/// `shapes` and `addresses` per operand of `step`: its inputs, then its
/// outputs (an absent optional has an empty shape and address 0).
Status evaluateLaunch(const GpuKernel &kernel, const Step &step,
                      const std::vector<shape::Shape> &shapes,
                      const std::vector<uint64_t> &addresses, Launch *out);

/// The element stride of an input of shape `in` along axis `axis` of the
/// output shape `out`, numpy broadcasting (right-aligned; 0 along an axis
/// the input broadcasts).
uint64_t broadcastStride(const shape::Shape &in, const shape::Shape &out,
                         size_t axis);

/// The code object of `target` a device of compute capability
/// major.minor runs: the cubin of the same major with the highest minor not
/// above the device's, else the PTX if the device is at least as new as
/// it. Refuses, naming what was built and what was found.
Status chooseCodeObject(const GpuTarget &target, int major, int minor,
                        const std::string &deviceName, size_t *index);

} // namespace ingot::gpu
