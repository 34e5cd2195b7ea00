//===- ExecutorImpl.h - The executor's state, shared by its files -*- C++
//-*-===//
//
// Executor.cpp resolves the plan and runs it; ExecutorStep.cpp runs one
// step. Private to runtime/src/exec.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Executor.h"

#include "cpu/KernelRegistry.h"
#include "cpu/RunTimeStorage.h"
#include "cpu/StepCache.h"
#include "exec/ConstantSteps.h"
#include "ingot/Profiler.h"
#include "ingot/ShapeRules.h"
#include "ingot/ThreadPool.h"

#include <memory>
#include <string>
#include <vector>

namespace ingot {

struct Executor::Impl {
  const Artifact &artifact;
  ThreadPool &pool;
  const KvCacheView *kvCache = nullptr; // handed to every kernel
  StepProfiler *profiler = nullptr;     // times kernels when set
  int64_t profiledRun = -1;             // the profiler's index of this run
  uint8_t *arena = nullptr;
  size_t arenaMapped = 0;
  Status planStatus; // plan problems, reported by run()
  std::vector<const cpu::KernelInfo *> kernels; // per step
  std::vector<const uint8_t *> data;            // per buffer
  std::vector<shape::Shape> shapes;             // per buffer, runtime
  std::vector<bool> known;                      // shape set in this run
  /// Per step: what its kernel derived from weights (packed GEMM panels).
  std::vector<std::unique_ptr<cpu::StepCache>> stepCaches;
  /// Steps that read only weights: run once, results kept apart from the
  /// arena with the shapes they had.
  ConstantSteps constants;
  /// Per buffer (empty for the others).
  std::vector<std::unique_ptr<uint8_t, void (*)(void *)>> constantResults;
  ConstantProgress constantProgress;
  bool constantsFreed = false; // results only constant steps read, freed
  /// Per buffer sized at run time (BufferKind::Dynamic), else null.
  std::vector<std::unique_ptr<cpu::RunTimeStorage>> runTimeStorage;
  /// Per buffer: its name in kernels' messages (bufferLabel).
  std::vector<std::string> labels;
  /// Operand records lent to each step's context and taken back: their
  /// shapes and names keep their capacity, so a warm step allocates
  /// nothing for them (a decode token runs ~250 steps).
  std::vector<cpu::KernelInput> inputScratch;
  std::vector<cpu::KernelOutput> outputScratch;

  Impl(const Artifact &a, ThreadPool &p) : artifact(a), pool(p) {}

  Status checkPlan();
  Status placeConstantResults();
  void freeUnreadConstantResults();
  Status bindInputs(const std::vector<NamedTensor> &inputs);
  /// Runs step `index`; `*skip` is how many steps to pass over after it.
  Status runStep(size_t index, int64_t *skip);
};

} // namespace ingot
