//===- Executor.h - Runs an artifact's plan on the CPU ----------*- C++ -*-===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ingot {

class ThreadPool;
class StepProfiler;
struct KvCacheView;

/// A host tensor owned by the caller: dense, row-major.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

/// Runs the step plan of one artifact. Owns the activation arena (sized by
/// the manifest's arena bytes). Not thread-safe: one run at a time.
class Executor {
public:
  Executor(const Artifact &artifact, ThreadPool &pool);
  ~Executor();
  /// Checks names, dtypes, ranks, fixed dims, consistent symbol values and
  /// compiled bounds of the inputs, runs every step, and copies the model
  /// outputs out into *outputs, replacing what it held (its tensors' memory
  /// is reused). Errors name the input/step/node involved and list what the
  /// model expects.
  Status run(const std::vector<NamedTensor> &inputs,
             std::vector<NamedTensor> *outputs);
  /// The KV cache that paged_attention steps read and write, or nullptr
  /// (those steps then fail). Owned by the caller; must outlive the runs.
  void setKvCache(const KvCacheView *view);
  /// Reports every run and kernel to `profiler` (owned by the caller, must
  /// outlive the runs); nullptr, the default, takes no timestamps at all.
  void setProfiler(StepProfiler *profiler);
  /// Bytes held outside the arena for results of steps that read only
  /// weights (computed on the first run, kept for the later ones; see
  /// exec/ConstantSteps.h).
  uint64_t constantResultBytes() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ingot
