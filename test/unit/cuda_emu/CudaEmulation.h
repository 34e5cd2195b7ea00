//===- CudaEmulation.h - CUDA kernel templates run as host code -*- C++ -*-===//
//
// Lets the kernel tests compile codegen/kernels/cuda/*.cuh as ordinary C++
// and run them on the CPU: blocks run one after another, and each thread of
// a block is a host thread, so __syncthreads() and warp shuffles are real
// barriers between real threads. __shared__ arrays become function statics,
// which all threads of the running block share. This checks a template's
// indexing, reductions and numerics against the CPU kernels; it says
// nothing about GPU timing, memory ordering or register pressure.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#define INGOT_DEVICE inline
#define INGOT_SHARED static

namespace ingot_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// A reusable barrier for `count` threads (generation counting).
class Barrier {
public:
  explicit Barrier(unsigned count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const unsigned gen = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen != generation_; });
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned count_, arrived_ = 0, generation_ = 0;
};

struct Warp {
  explicit Warp(unsigned lanes) : barrier(lanes) {}
  Barrier barrier;
  float slots[32] = {};
  unsigned lanes;
};

struct BlockState {
  explicit BlockState(unsigned threads) : barrier(threads) {
    for (unsigned w = 0; w < (threads + 31) / 32; ++w) {
      const unsigned lanes = std::min(32u, threads - w * 32);
      warps.emplace_back(new Warp(lanes));
      warps.back()->lanes = lanes;
    }
  }
  ~BlockState() {
    for (Warp *w : warps)
      delete w;
  }
  Barrier barrier;
  std::vector<Warp *> warps;
};

inline thread_local BlockState *currentBlock = nullptr;
inline thread_local unsigned linearThread = 0;

} // namespace ingot_emu

inline thread_local ingot_emu::Dim3 threadIdx, blockIdx;
inline ingot_emu::Dim3 blockDim, gridDim;

inline void __syncthreads() { ingot_emu::currentBlock->barrier.wait(); }

inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}

namespace ingot_k {
typedef long long i64;
typedef int i32;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;
using std::fmaxf;
using std::fminf;
inline float shflXor(float v, int laneMask) {
  using namespace ingot_emu;
  Warp &w = *currentBlock->warps[linearThread / 32];
  const unsigned lane = linearThread % 32, from = lane ^ unsigned(laneMask);
  w.slots[lane] = v;
  w.barrier.wait();
  const float r = from < w.lanes ? w.slots[from] : v;
  w.barrier.wait();
  return r;
}
inline void syncBlock() { __syncthreads(); }
inline float expFast(float x) { return std::exp(x); }
inline float rsqrtF(float x) { return 1.f / std::sqrt(x); }
// Round-to-nearest arithmetic that the device never contracts into an FMA;
// the host build has no FMA, so plain operators round the same way.
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
// The CPU kernels take std::sin and std::cos separately; so does this.
inline void sincos(double x, double *s, double *c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
} // namespace ingot_k

namespace ingot_emu {

/// Runs `body` as a kernel of grid x block threads, one block at a time.
inline void launch(Dim3 grid, Dim3 block, const std::function<void()> &body) {
  gridDim = grid, blockDim = block;
  const unsigned threads = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        BlockState state(threads);
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (unsigned t = 0; t < threads; ++t)
          pool.emplace_back([&, t] {
            currentBlock = &state;
            linearThread = t;
            threadIdx = {t % block.x, t / block.x % block.y,
                         t / (block.x * block.y)};
            blockIdx = {bx, by, bz};
            body();
          });
        for (std::thread &th : pool)
          th.join();
      }
}

} // namespace ingot_emu
