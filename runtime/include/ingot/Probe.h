//===- Probe.h - Ceilings of the machine a run is measured on ---*- C++ -*-===//
//
// Throughput figures mean little without the machine's limits: a short probe
// measures the memory read bandwidth (decode is bound by it) and the peak f32
// FMA rate (prefill is bound by it) with the threads the run will use, so
// every figure can also be printed as a share of its ceiling.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace ingot {

class ThreadPool;

struct MachineInfo {
  std::string cpuModel;  // /proc/cpuinfo "model name"
  std::string isa;       // the kernels' ISA in use: "avx512", "avx2", "generic"
  unsigned threads = 0;  // threads the run uses
  unsigned cores = 0;    // logical CPUs online
  double memTotalGiB = 0;
};

struct Ceilings {
  double readGBps = 0;   // best of several passes reading a buffer >> LLC
  double peakGflops = 0; // f32 FMA throughput, all `threads`
  double probeSeconds = 0;
};

MachineInfo describeMachine(unsigned threads);
/// Runs for about `seconds` in total on `pool`'s threads.
Ceilings probeCeilings(ThreadPool &pool, double seconds = 0.6);

} // namespace ingot
