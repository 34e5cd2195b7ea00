//===- ThreadPool.h - Fixed-size pool for data-parallel kernels -*- C++ -*-===//
//
// Hand-written rather than a library pool (OpenMP, TBB): a decode step runs
// hundreds of kernels microseconds apart, and the workers here poll briefly
// for the next job before they sleep (ThreadPool.cpp), so back-to-back
// kernels do not each pay a futex wake-up, which costs more than a small
// kernel takes. Errors (a thread that cannot start) are a Status, not an
// exception.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <cstdint>
#include <functional>
#include <memory>

namespace ingot {

/// A fixed set of worker threads. parallelFor splits [0, n) into contiguous
/// chunks of at least `grain` items and blocks until all are done; the
/// calling thread takes part. Nested calls run serially on the caller.
class ThreadPool {
public:
  /// More than any machine this runs on has cores; asking for more is a
  /// mistake (each thread spins while it waits for work).
  static constexpr unsigned kMaxThreads = 4096;

  /// 0 = hardware concurrency. Never throws: when the threads cannot all be
  /// started (more than kMaxThreads, or the system refuses one), the pool
  /// runs everything on the caller and status() says why.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  unsigned size() const;
  /// Ok, or the error that kept the requested threads from starting.
  const Status &status() const;
  /// An exception thrown by `fn` on any thread is rethrown here, on the
  /// caller, once every chunk has finished (the first one, if several).
  void parallelFor(int64_t n, int64_t grain,
                   const std::function<void(int64_t begin, int64_t end)> &fn);

private:
  void stopWorkers();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ingot
