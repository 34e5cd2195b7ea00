//===- ThreadPool.cpp - Fixed-size pool for data-parallel kernels ---------===//
//
// One job at a time: parallelFor publishes a job (a generation number plus the
// chunking of [0, n)), wakes the workers, and every participant, the caller
// included, claims chunks from an atomic counter until none are left. Workers
// spin briefly before sleeping, so back-to-back kernels do not pay a futex
// wake-up each, while an idle pool costs no CPU.
//
//===----------------------------------------------------------------------===//

#include "ingot/ThreadPool.h"

#include "exec/FloatEnvironment.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define INGOT_CPU_RELAX() _mm_pause()
#else
#define INGOT_CPU_RELAX() std::this_thread::yield()
#endif

namespace ingot {
namespace {

/// Set while a thread runs chunks of a job, so a nested parallelFor on that
/// thread runs serially instead of waiting on the pool it is part of.
thread_local bool tlsInsideJob = false;

/// Iterations a worker polls for a new job before it sleeps; about 50-100us.
constexpr int kSpinIterations = 4000;

} // namespace

struct ThreadPool::Impl {
  unsigned size = 1;
  std::vector<std::thread> workers;
  Status status;

  // Job description, written by the caller under `mutex` before `generation`
  // is bumped, and read by workers after they registered under `mutex`.
  const std::function<void(int64_t, int64_t)> *fn = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  uint32_t callerFloatControl = 0; // workers adopt it for the job
  bool jobOpen = false;

  std::atomic<uint64_t> generation{0};
  std::atomic<int64_t> nextChunk{0};
  std::atomic<int64_t> doneChunks{0};
  // The first exception a chunk threw (say std::bad_alloc in a kernel);
  // parallelFor rethrows it on the caller once the job is closed, since an
  // exception leaving a worker thread would terminate the process.
  std::exception_ptr jobError;
  std::mutex errorMutex;
  // Workers registered on the current job: incremented under `mutex`
  // while the job is open, decremented without it when a worker is done.
  std::atomic<int> activeWorkers{0};
  bool stopping = false;

  std::mutex mutex;
  std::condition_variable wake; // workers wait for a job
  std::mutex jobMutex;          // one parallelFor at a time

  /// Runs chunks of the current job until none are left.
  void runChunks() {
    bool wasInside = tlsInsideJob;
    tlsInsideJob = true;
    for (;;) {
      int64_t c = nextChunk.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks)
        break;
      int64_t begin = n * c / chunks;
      int64_t end = n * (c + 1) / chunks;
      try {
        (*fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!jobError)
          jobError = std::current_exception();
      }
      doneChunks.fetch_add(1, std::memory_order_release);
    }
    tlsInsideJob = wasInside;
  }

  void workerLoop() {
    uint64_t seen = 0;
    uint32_t word = 0;
    for (;;) {
      for (int i = 0; i < kSpinIterations; ++i) {
        if (generation.load(std::memory_order_acquire) != seen)
          break;
        INGOT_CPU_RELAX();
      }
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] {
          return stopping || generation.load(std::memory_order_relaxed) != seen;
        });
        if (stopping)
          return;
        seen = generation.load(std::memory_order_relaxed);
        if (!jobOpen)
          continue; // woke after the job finished: nothing to do
        activeWorkers.fetch_add(1, std::memory_order_relaxed);
        word = callerFloatControl;
      }
      {
        ScopedFloatControl callers(word);
        runChunks();
      }
      activeWorkers.fetch_sub(1, std::memory_order_release);
    }
  }
};

ThreadPool::ThreadPool(unsigned threads) : impl_(std::make_unique<Impl>()) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  if (threads > kMaxThreads) {
    impl_->status = Status::error(
        "cannot start " + std::to_string(threads) + " threads: at most " +
        std::to_string(kMaxThreads) + " are supported");
    return;
  }
  try {
    impl_->workers.reserve(threads - 1);
    for (unsigned i = 1; i < threads; ++i)
      impl_->workers.emplace_back([this] { impl_->workerLoop(); });
    impl_->size = threads;
  } catch (const std::exception &e) { // std::system_error or std::bad_alloc
    impl_->status = Status::error(
        "cannot start " + std::to_string(threads) + " threads (the system " +
        "gave " + std::to_string(impl_->workers.size() + 1) + "): " + e.what());
    stopWorkers(); // the pool stays usable, on the caller alone
  }
}

void ThreadPool::stopWorkers() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
    impl_->generation.fetch_add(1, std::memory_order_release);
  }
  impl_->wake.notify_all();
  for (std::thread &t : impl_->workers)
    t.join();
  impl_->workers.clear();
}

ThreadPool::~ThreadPool() { stopWorkers(); }

unsigned ThreadPool::size() const { return impl_->size; }

const Status &ThreadPool::status() const { return impl_->status; }

void ThreadPool::parallelFor(
    int64_t n, int64_t grain,
    const std::function<void(int64_t begin, int64_t end)> &fn) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  // More chunks than threads lets fast threads take over from a slow one
  // (the machine may be shared); every chunk still holds >= grain items.
  int64_t chunks = std::min<int64_t>(n / grain, int64_t(impl_->size) * 4);
  if (chunks <= 1 || impl_->size == 1 || tlsInsideJob) {
    fn(0, n);
    return;
  }
  // Another thread of the process is using the pool: run on the caller rather
  // than queue behind it.
  std::unique_lock<std::mutex> jobLock(impl_->jobMutex, std::try_to_lock);
  if (!jobLock.owns_lock()) {
    fn(0, n);
    return;
  }
  Impl &p = *impl_;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    p.fn = &fn;
    p.n = n;
    p.chunks = chunks;
    p.callerFloatControl = floatControl();
    p.nextChunk.store(0, std::memory_order_relaxed);
    p.doneChunks.store(0, std::memory_order_relaxed);
    p.jobOpen = true;
    p.generation.fetch_add(1, std::memory_order_release);
  }
  p.wake.notify_all();
  p.runChunks();
  for (int spins = 0; p.doneChunks.load(std::memory_order_acquire) < chunks;
       ++spins) {
    if (spins < kSpinIterations)
      INGOT_CPU_RELAX();
    else
      std::this_thread::yield(); // a worker was descheduled mid-chunk
  }
  // Close the job (no worker registers after this) and wait until none
  // still holds a reference to it. They have run their last chunk, so
  // this is a short spin: a condition variable here made the caller sleep
  // and be woken by a futex call (~5 us on a VM) on most jobs, as long as
  // a whole small kernel.
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    p.jobOpen = false;
  }
  for (int spins = 0; p.activeWorkers.load(std::memory_order_acquire) != 0;
       ++spins) {
    if (spins < kSpinIterations)
      INGOT_CPU_RELAX();
    else
      std::this_thread::yield();
  }
  p.fn = nullptr;
  if (std::exception_ptr error = std::exchange(p.jobError, nullptr))
    std::rethrow_exception(error); // the locks are released on the way out
}

} // namespace ingot
