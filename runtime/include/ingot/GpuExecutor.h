//===- GpuExecutor.h - Runs an artifact's plan on a GPU ---------*- C++ -*-===//
//
// The GPU counterpart of Executor for plans whose every step has a kernel
// in the device's GPU target table: weights are uploaded once, the arena
// and the inputs live in device memory, each step is one launch exactly as
// the table describes it, and the outputs come back to the host. Plans with
// steps the GPU target does not cover (today: any GEMM, attention or norm)
// are refused with how much is covered, so callers fall back to the CPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/Device.h"
#include "ingot/Executor.h"

#include <memory>
#include <string>
#include <vector>

namespace ingot {

class GpuExecutor {
public:
  /// Checks coverage and the code object for the device, loads it, and
  /// uploads the weights. `artifact` must outlive the executor.
  static Status create(const Artifact &artifact, std::unique_ptr<Device> device,
                       std::unique_ptr<GpuExecutor> *out);
  ~GpuExecutor();

  /// Same contract as Executor::run.
  Status run(const std::vector<NamedTensor> &inputs,
             std::vector<NamedTensor> *outputs);
  const Device &device() const;

private:
  GpuExecutor();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Whether `m` can run on a GPU of `target`: every step has a kernel.
/// Otherwise false with a sentence saying how much is covered.
bool gpuCoversPlan(const Manifest &m, const std::string &target,
                   std::string *why);

} // namespace ingot
