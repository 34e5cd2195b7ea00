//===- ThreadPoolTest.cpp - Coverage, nesting, reuse of the pool ----------===//

#include "ingot/ThreadPool.h"

#include "exec/FloatEnvironment.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using ingot::ThreadPool;

namespace {

/// Every index in [0, n) is visited exactly once, in chunks >= grain (except
/// when the whole range is smaller).
void checkCoverage(ThreadPool &pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(n);
  std::atomic<int64_t> smallChunks{0};
  pool.parallelFor(n, grain, [&](int64_t b, int64_t e) {
    ASSERT_LE(0, b);
    ASSERT_LT(b, e);
    ASSERT_LE(e, n);
    if (e - b < grain)
      ++smallChunks;
    for (int64_t i = b; i < e; ++i)
      ++hits[i];
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "index " << i << " n=" << n;
  EXPECT_EQ(smallChunks.load(), n < grain ? 1 : 0);
}

TEST(ThreadPool, SizeAndDefault) {
  ThreadPool one(1), four(4), dflt(0);
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(four.size(), 4u);
  EXPECT_GE(dflt.size(), 1u);
}

TEST(ThreadPool, CoversRangeExactlyOnce) {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 7, 64, 1000, 100003})
      for (int64_t grain : {1, 3, 64, 5000})
        checkCoverage(pool, n, grain);
  }
}

TEST(ThreadPool, EmptyAndNegativeRanges) {
  ThreadPool pool(4);
  int calls = 0;
  pool.parallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
  pool.parallelFor(-5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, UsesSeveralThreadsAndCallerTakesPart) {
  ThreadPool pool(4);
  std::mutex mu;
  std::set<std::thread::id> ids;
  // Enough slow chunks that workers get a share even on a busy machine.
  pool.parallelFor(64, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_GE(ids.size(), 2u);
  EXPECT_TRUE(ids.count(std::this_thread::get_id()));
}

TEST(ThreadPool, NestedCallsRunSerially) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  pool.parallelFor(16, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::thread::id outer = std::this_thread::get_id();
      int innerCalls = 0;
      pool.parallelFor(100, 1, [&](int64_t ib, int64_t ie) {
        EXPECT_EQ(std::this_thread::get_id(), outer);
        ++innerCalls;
        for (int64_t j = ib; j < ie; ++j)
          sum += j;
      });
      EXPECT_EQ(innerCalls, 1);
    }
  });
  EXPECT_EQ(sum.load(), 16 * 4950);
}

TEST(ThreadPool, ManyBackToBackJobs) {
  ThreadPool pool(3);
  int64_t total = 0;
  for (int round = 0; round < 2000; ++round) {
    std::atomic<int64_t> s{0};
    pool.parallelFor(round % 50 + 1, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        s += i + 1;
    });
    int64_t n = round % 50 + 1;
    ASSERT_EQ(s.load(), n * (n + 1) / 2);
    total += s;
  }
  EXPECT_GT(total, 0);
}

TEST(ThreadPool, ConcurrentCallersBothComplete) {
  ThreadPool pool(3);
  std::atomic<int64_t> a{0}, b{0};
  auto work = [&](std::atomic<int64_t> &acc) {
    for (int r = 0; r < 200; ++r)
      pool.parallelFor(1000, 10,
                       [&](int64_t lo, int64_t hi) { acc += hi - lo; });
  };
  std::thread t1([&] { work(a); });
  std::thread t2([&] { work(b); });
  t1.join();
  t2.join();
  EXPECT_EQ(a.load(), 200 * 1000);
  EXPECT_EQ(b.load(), 200 * 1000);
}

TEST(ThreadPool, DestroyWhileIdle) {
  for (int i = 0; i < 20; ++i) {
    ThreadPool pool(4);
    std::atomic<int> n{0};
    pool.parallelFor(8, 1, [&](int64_t b, int64_t e) { n += int(e - b); });
    EXPECT_EQ(n.load(), 8);
  }
}

// Kernels run with subnormals flushed (exec/FloatEnvironment.h); a chunk
// must compute alike whichever thread runs it, so workers take the caller's
// mode for each job and the caller's own mode is restored afterwards.
TEST(ThreadPoolTest, WorkersTakeTheCallersDenormalMode) {
#ifndef INGOT_HAS_MXCSR
  GTEST_SKIP() << "no SSE control word on this CPU";
#endif
  ThreadPool pool(4);
  volatile float tiny = 1e-39f; // subnormal; volatile keeps it at run time
  // Bits 0-5 are sticky exception flags, not modes.
  auto modes = [] { return ingot::floatControl() & ~0x3Fu; };
  const uint32_t before = modes();
  for (bool flush : {true, false, true}) {
    std::vector<float> out(256, -1.0f);
    {
      ingot::ScopedFloatControl mode(flush);
      pool.parallelFor(256, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          out[i] = tiny * 0.5f;
      });
    }
    for (float v : out)
      ASSERT_EQ(v == 0.0f, flush) << "flush " << flush << " got " << v;
    EXPECT_EQ(modes(), before);
  }
}

} // namespace

TEST(ThreadPool, ExceptionsOnWorkersReachTheCaller) {
  // A kernel that throws (std::bad_alloc, say) on a worker thread must not
  // terminate the process: the caller gets the exception once the job is
  // over, and the pool keeps working.
  ThreadPool pool(4);
  const std::thread::id caller = std::this_thread::get_id();
  int caughtRounds = 0;
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> workerThrows{0};
    std::atomic<int64_t> visited{0};
    try {
      pool.parallelFor(4096, 1, [&](int64_t b, int64_t e) {
        visited += e - b;
        // Slow enough that the workers take chunks too.
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        if (std::this_thread::get_id() != caller && workerThrows++ == 0)
          throw std::runtime_error("chunk failed");
      });
      // Every chunk may have run on the caller: nothing was thrown then.
      EXPECT_EQ(workerThrows.load(), 0);
    } catch (const std::runtime_error &e) {
      EXPECT_STREQ(e.what(), "chunk failed");
      EXPECT_GE(workerThrows.load(), 1);
      ++caughtRounds;
    }
    EXPECT_EQ(visited.load(), 4096); // the other chunks still ran
  }
  EXPECT_GT(caughtRounds, 0) << "no worker ever took a chunk";
  // The caller's own exception comes out the same way.
  EXPECT_THROW(pool.parallelFor(64, 1,
                                [&](int64_t b, int64_t) {
                                  if (b == 0)
                                    throw std::bad_alloc();
                                }),
               std::bad_alloc);
  checkCoverage(pool, 1000, 7);
}
