//===- BenchMetricsTest.cpp - Serving-benchmark statistics ----------------===//
//
// Every expected value below is worked out by hand (and agrees with numpy:
// np.percentile's default "linear" method, np.std's default ddof = 0).
//
//===----------------------------------------------------------------------===//
#include "BenchMetrics.h"

#include <gtest/gtest.h>

namespace ingot {
namespace {

TEST(BenchMetricsTest, PercentileInterpolatesLinearlyBetweenRanks) {
  std::vector<double> v = {4, 1, 3, 2}; // unsorted on purpose
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);  // rank 1.5
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);  // rank 2.7
  EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97); // rank 2.97
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({0, 10}, 95), 9.5);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
}

TEST(BenchMetricsTest, SummaryUsesPopulationStd) {
  Distribution d = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(d.count, 8);
  EXPECT_DOUBLE_EQ(d.mean, 5);
  EXPECT_DOUBLE_EQ(d.stddev, 2); // the sample std (ddof = 1) would be 2.138
  EXPECT_DOUBLE_EQ(d.median, 4.5);
  EXPECT_DOUBLE_EQ(d.p50, 4.5);
  EXPECT_DOUBLE_EQ(d.p90, 7.6); // rank 6.3 between 7 and 9
  Distribution empty = summarize({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.mean, 0);
  EXPECT_EQ(empty.p99, 0);
}

RequestTiming timing(bool ok, int64_t input, std::vector<double> tokens,
                     double e2e) {
  RequestTiming r;
  r.ok = ok;
  r.inputTokens = input;
  r.tokenTimesMs = std::move(tokens);
  r.e2eMs = e2e;
  return r;
}

// A: 3 tokens, TPOT (130 - 100) / 2 = 15, gaps 10 and 20.
// B: 1 token: no TPOT, no gap.  C: 2 tokens, TPOT (245 - 200) / 1 = 45,
// gap 40 (E2E ends 5 ms after the last token's callback).  D failed.
std::vector<RequestTiming> sample() {
  return {timing(true, 5, {100, 110, 130}, 130), timing(true, 7, {50}, 50),
          timing(true, 9, {200, 240}, 245), timing(false, 11, {}, 300)};
}

TEST(BenchMetricsTest, ServingMetricsFromTimestamps) {
  ServingMetrics m = computeServingMetrics(sample(), 2.0, nullptr);
  EXPECT_EQ(m.completed, 3);
  EXPECT_EQ(m.failed, 1);
  EXPECT_EQ(m.totalInputTokens, 21); // the failed request's 11 excluded
  EXPECT_EQ(m.totalOutputTokens, 6);
  EXPECT_DOUBLE_EQ(m.requestThroughput, 1.5);
  EXPECT_DOUBLE_EQ(m.outputThroughput, 3);
  EXPECT_DOUBLE_EQ(m.totalTokenThroughput, 13.5);

  EXPECT_EQ(m.ttftMs.count, 3);
  EXPECT_DOUBLE_EQ(m.ttftMs.mean, 350.0 / 3);
  EXPECT_DOUBLE_EQ(m.ttftMs.median, 100);
  EXPECT_DOUBLE_EQ(m.e2eMs.p50, 130);
  EXPECT_DOUBLE_EQ(m.e2eMs.p90, 222); // rank 1.8 between 130 and 245

  // The one-token request is excluded from TPOT.
  EXPECT_EQ(m.tpotMs.count, 2);
  EXPECT_DOUBLE_EQ(m.tpotMs.mean, 30);
  EXPECT_DOUBLE_EQ(m.tpotMs.stddev, 15);
  // ITL pools the gaps of all requests: {10, 20, 40}.
  EXPECT_EQ(m.itlMs.count, 3);
  EXPECT_DOUBLE_EQ(m.itlMs.mean, 70.0 / 3);
  EXPECT_DOUBLE_EQ(m.itlMs.median, 20);
  EXPECT_DOUBLE_EQ(m.itlMs.p99, 39.6); // rank 1.98 between 20 and 40
  EXPECT_FALSE(m.hasGoodput);
}

TEST(BenchMetricsTest, GoodputCountsRequestsMeetingEverySlo) {
  SloTargets slo;
  slo.ttftMs = 150;
  slo.tpotMs = 20;
  // A meets both; B's TPOT counts as 0 (one token); C misses the TTFT.
  ServingMetrics m = computeServingMetrics(sample(), 2.0, &slo);
  EXPECT_TRUE(m.hasGoodput);
  EXPECT_EQ(m.goodRequests, 2);
  EXPECT_DOUBLE_EQ(m.goodput, 1.0);
  slo.e2eMs = 100; // now A's 130 ms E2E misses
  m = computeServingMetrics(sample(), 2.0, &slo);
  EXPECT_EQ(m.goodRequests, 1);
  EXPECT_DOUBLE_EQ(m.goodput, 0.5);
  slo = SloTargets();
  slo.tpotMs = 14.9; // only B (TPOT 0) passes
  EXPECT_EQ(computeServingMetrics(sample(), 2.0, &slo).goodRequests, 1);
}

TEST(BenchMetricsTest, MeanStdOfRepetitions) {
  MeanStd r = meanStd({10, 20, 30});
  EXPECT_DOUBLE_EQ(r.mean, 20);
  EXPECT_NEAR(r.stddev, 8.16496580927726, 1e-12); // sqrt(200 / 3)
}

TEST(BenchMetricsTest, ParseSlo) {
  SloTargets slo;
  ASSERT_TRUE(parseSlo("ttft_ms=200,tpot_ms=50.5", &slo));
  EXPECT_DOUBLE_EQ(slo.ttftMs, 200);
  EXPECT_DOUBLE_EQ(slo.tpotMs, 50.5);
  EXPECT_LT(slo.e2eMs, 0);
  ASSERT_TRUE(parseSlo("e2e_ms=1000", &slo));
  EXPECT_DOUBLE_EQ(slo.e2eMs, 1000);
  EXPECT_LT(slo.ttftMs, 0);
  Status bad = parseSlo("ttft_ms=abc", &slo);
  EXPECT_FALSE(bad);
  EXPECT_NE(bad.message().find("ttft_ms"), std::string::npos);
  EXPECT_FALSE(parseSlo("latency=3", &slo));
  EXPECT_FALSE(parseSlo("ttft_ms=-1", &slo));
  EXPECT_FALSE(parseSlo("", &slo));
}

} // namespace
} // namespace ingot
