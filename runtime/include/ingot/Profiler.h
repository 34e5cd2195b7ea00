//===- Profiler.h - Per-step, per-kernel timings ----------------*- C++ -*-===//
//
// An Executor given a StepProfiler reports every kernel it runs with its
// wall time and an estimate of the bytes it moved and the FLOPs it did
// (from the step's kernel, shapes and dtypes), so a profile can say how
// far each kernel is from the memory-bandwidth and FLOP ceilings. Without a
// profiler the executor takes no timestamps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace ingot {

struct KernelEvent {
  int64_t run = 0;       // index of the Executor::run call (one engine step)
  int32_t stepIndex = 0; // index in Manifest::steps
  std::string kernel;    // e.g. "linear"
  std::string origin;    // graph node, e.g. "layers.3.mlp.down_proj"
  double startUs = 0;    // since the profiler was created
  double durUs = 0;
  double bytes = 0; // estimated bytes read + written
  double flops = 0; // estimated floating-point operations
};

struct RunEvent {
  int64_t run = 0;
  std::string label; // e.g. "prefill 512" / "decode 8" (who calls run)
  double startUs = 0, durUs = 0;
  int64_t tokens = 0; // tokens processed by the step
};

/// Thread-safe collector; the executor calls beginRun/kernel/endRun.
class StepProfiler {
public:
  StepProfiler();
  /// Label and token count of the next run (set by Engine/Generator).
  void setNextRunLabel(std::string label, int64_t tokens);
  int64_t beginRun();
  void kernel(const KernelEvent &e);
  void endRun(int64_t run);
  double nowUs() const;
  /// Drops every event recorded so far (after a warm-up run).
  void reset();

  std::vector<KernelEvent> kernels() const;
  std::vector<RunEvent> runs() const;
  /// Chrome trace event format (opens in Perfetto / chrome://tracing).
  std::string chromeTraceJson() const;
  /// Top-N kernels by total time: calls, total ms, share of step time,
  /// mean µs, achieved GB/s and GFLOP/s, and % of the ceilings if they are
  /// > 0; the rest in one "(K more)" row, so the shares add up to the
  /// kernels' share of step time (the footer line). `byOrigin` groups by
  /// kernel and graph node with layer numbers folded ("layers.*.mlp...").
  std::string topKernelsTable(int topN, double readGBps, double peakGflops,
                              bool byOrigin = false) const;

private:
  mutable std::mutex mu_;
  std::vector<KernelEvent> kernels_;
  std::vector<RunEvent> runs_;
  std::string nextLabel_;
  int64_t nextTokens_ = 0;
  int64_t t0Ns_ = 0;
};

} // namespace ingot
