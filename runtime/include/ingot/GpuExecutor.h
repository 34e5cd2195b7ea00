//===- GpuExecutor.h - Runs an artifact's plan on a GPU ---------*- C++ -*-===//
//
// The GPU counterpart of Executor for plans whose every step has a kernel
// in the device's GPU target table: weights are uploaded once, the arena,
// the inputs and the paged KV cache live in device memory, each step is the
// launches the table describes, and the outputs come back to the host.
// Plans with steps the GPU target does not cover are refused with how much
// is covered, so callers fall back to the CPU.
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
  /// Times each step when set: its launches are followed by a device
  /// synchronise (so a profiled run is slower), and the copies of the
  /// inputs and outputs are reported as "copy-to-device" / "copy-to-host"
  /// inside the run's span, since on a GPU they are part of a step's cost.
  void setProfiler(StepProfiler *profiler);

  /// Allocates the paged KV cache in device memory: `numBlocks` blocks of
  /// the manifest's geometry per layer, K and V apart, of `dtype` (f32
  /// only for now). The attention steps read and write it.
  Status allocateKvCache(int64_t numBlocks, DType dtype);
  /// Bytes of device memory one cache block takes over all layers.
  static uint64_t kvBytesPerBlock(const Manifest &m);
  /// How many KV blocks fit in `fraction` of the device's memory, after
  /// what is allocated already (weights, arena, inputs); an error when not
  /// even one does.
  Status kvBlocksThatFit(double fraction, int64_t *blocks);

private:
  GpuExecutor();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The GPU executor `req` asks for. "cpu", or "auto" when the artifact has
/// no GPU code, no GPU is there or its code does not cover the plan: no
/// executor (run on the CPU), with *note saying why when the artifact has
/// GPU code. "cuda[:N]" that cannot be honoured is an error. On success
/// with a GPU, *note names the device.
Status openGpuExecutor(const Artifact &artifact, const DeviceRequest &req,
                       std::unique_ptr<GpuExecutor> *gpu, std::string *note);

/// Whether `m` can run on a GPU of `target`: every step has a kernel.
/// Otherwise false with a sentence saying how much is covered.
bool gpuCoversPlan(const Manifest &m, const std::string &target,
                   std::string *why);

} // namespace ingot
