//===- Probe.cpp - Ceilings of the machine a run is measured on -----------===//
//
// Two short micro-benchmarks on the run's own thread pool:
//  * read bandwidth: every chunk of a 256 MiB buffer (far beyond any LLC)
//    is summed with the widest loads the CPU has; the best of several
//    passes counts, since a shared machine only ever slows a pass down;
//  * peak f32 FMA rate: each chunk runs independent FMA chains held in
//    registers (enough chains to cover FMA latency on two ports), so the
//    loop is bound by FMA issue, never by memory.
// ISA-specific loops are compiled per function with target attributes, as
// the kernels do, and chosen with the kernels' own cpuid check.
//
//===----------------------------------------------------------------------===//
#include "ingot/Probe.h"

#include "cpu/Gemm.h"
#include "ingot/ThreadPool.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

namespace ingot {
namespace {

using cpu::bestGemmIsa;
using cpu::GemmIsa;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Keeps the compiler from discarding the reads and FMAs.
std::atomic<double> sink{0};

// Horizontal sum through memory: GCC 12 warns (falsely) inside
// _mm512_reduce_add_ps, and this runs once per chunk.
__attribute__((target("avx512f"))) double hsum512(__m512 v) {
  float lanes[16];
  _mm512_storeu_ps(lanes, v);
  double s = 0;
  for (float x : lanes)
    s += x;
  return s;
}

__attribute__((target("avx512f"))) double sumAvx512(const float *p, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 64 <= n; i += 64) {
    a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
    a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
  }
  return hsum512(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

__attribute__((target("avx2"))) double sumAvx2(const float *p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
  }
  float lanes[8];
  _mm256_storeu_ps(lanes,
                   _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  double s = 0;
  for (float x : lanes)
    s += x;
  return s;
}

double sumGeneric(const float *p, size_t n) {
  float a[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k)
      a[k] += p[i + k];
  return double(a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]);
}

// 16 chains of 16 lanes: with 4-cycle FMA latency and 2 FMA ports, 8 chains
// saturate a core; 16 leave headroom for longer latencies.
constexpr int kChains = 16;

__attribute__((target("avx512f"))) double fmaAvx512(int64_t iters) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm512_set1_ps(float(c) * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c)
    s = _mm512_add_ps(s, acc[c]);
  return hsum512(s);
}

__attribute__((target("avx2,fma"))) double fmaAvx2(int64_t iters) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm256_set1_ps(float(c) * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c)
    s = _mm256_add_ps(s, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  return double(lanes[0] + lanes[7]);
}

double fmaGeneric(int64_t iters) {
  float acc[kChains][4];
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < 4; ++l)
      acc[c][l] = float(c) * 1e-3f;
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c)
      for (int l = 0; l < 4; ++l)
        acc[c][l] = acc[c][l] * 0.999999f + 1e-7f;
  return double(acc[0][0] + acc[kChains - 1][3]);
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown";
}

double memTotalGiB() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t kb = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemTotal:")
      return double(kb) / (1024.0 * 1024.0);
  return 0;
}

} // namespace

MachineInfo describeMachine(unsigned threads) {
  MachineInfo m;
  m.cpuModel = cpuModel();
  switch (bestGemmIsa()) {
  case GemmIsa::Avx512:
    m.isa = "avx512";
    break;
  case GemmIsa::Avx2:
    m.isa = "avx2";
    break;
  case GemmIsa::Generic:
    m.isa = "generic";
    break;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = online > 0 ? unsigned(online) : 1;
  m.threads = threads ? threads : m.cores;
  m.memTotalGiB = memTotalGiB();
  return m;
}

Ceilings probeCeilings(ThreadPool &pool, double budgetSeconds) {
  Ceilings c;
  auto start = Clock::now();
  const GemmIsa isa = bestGemmIsa();
  const int64_t chunks = int64_t(pool.size()) * 4;

  // --- read bandwidth -----------------------------------------------------
  const size_t bytes = size_t(256) << 20;
  const size_t floats = bytes / sizeof(float);
  std::unique_ptr<float, decltype(&std::free)> buf(
      static_cast<float *>(std::aligned_alloc(64, bytes)), &std::free);
  if (!buf)
    return c;
  float *data = buf.get();
  // First touch from the pool spreads the pages like the weights' are read.
  pool.parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
    size_t lo = floats * b / chunks, hi = floats * e / chunks;
    std::fill(data + lo, data + hi, 1.0f);
  });
  auto readPass = [&] {
    auto t0 = Clock::now();
    pool.parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
      // Chunk edges on 64-float (256 B) boundaries keep loads aligned.
      size_t lo = floats * b / chunks / 64 * 64;
      size_t hi = floats * e / chunks / 64 * 64;
      double s = isa == GemmIsa::Avx512 ? sumAvx512(data + lo, hi - lo)
                 : isa == GemmIsa::Avx2 ? sumAvx2(data + lo, hi - lo)
                                        : sumGeneric(data + lo, hi - lo);
      sink.store(s, std::memory_order_relaxed);
    });
    return seconds(t0, Clock::now());
  };
  double best = 1e30;
  auto bwDeadline = start + std::chrono::duration<double>(budgetSeconds / 2);
  for (int pass = 0; pass < 3 || (pass < 20 && Clock::now() < bwDeadline);
       ++pass)
    best = std::min(best, readPass());
  c.readGBps = double(bytes) / best / 1e9;
  buf.reset();

  // --- peak FMA rate ------------------------------------------------------
  const int lanes = isa == GemmIsa::Avx512 ? 16 : isa == GemmIsa::Avx2 ? 8 : 4;
  auto fmaPass = [&](int64_t iters) {
    auto t0 = Clock::now();
    pool.parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        double s = isa == GemmIsa::Avx512 ? fmaAvx512(iters)
                   : isa == GemmIsa::Avx2 ? fmaAvx2(iters)
                                          : fmaGeneric(iters);
        sink.store(s, std::memory_order_relaxed);
      }
    });
    double t = seconds(t0, Clock::now());
    double flops = 2.0 * kChains * lanes * double(iters) * double(chunks);
    return flops / t / 1e9;
  };
  // Size a pass to ~20 ms from a short calibration run.
  int64_t iters = 1 << 14;
  auto t0 = Clock::now();
  fmaPass(iters);
  double calib = std::max(seconds(t0, Clock::now()), 1e-4);
  iters = std::max<int64_t>(iters, int64_t(double(iters) * 0.02 / calib));
  auto deadline = start + std::chrono::duration<double>(budgetSeconds);
  double peak = 0;
  for (int pass = 0; pass < 3 || (pass < 20 && Clock::now() < deadline); ++pass)
    peak = std::max(peak, fmaPass(iters));
  c.peakGflops = peak;
  c.probeSeconds = seconds(start, Clock::now());
  return c;
}

} // namespace ingot
