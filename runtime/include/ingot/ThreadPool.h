//===- ThreadPool.h - Fixed-size pool for data-parallel kernels -*- C++ -*-===//
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace ingot {

/// A fixed set of worker threads. parallelFor splits [0, n) into contiguous
/// chunks of at least `grain` items and blocks until all are done; the
/// calling thread takes part. Nested calls run serially on the caller.
class ThreadPool {
public:
  explicit ThreadPool(unsigned threads); // 0 = hardware concurrency
  ~ThreadPool();
  unsigned size() const;
  void parallelFor(int64_t n, int64_t grain,
                   const std::function<void(int64_t begin, int64_t end)> &fn);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ingot
