//===- ServerMetricsTest.cpp - Prometheus text and request parsing --------===//
#include "OpenAiRequest.h"
#include "ServerMetrics.h"

#include <gtest/gtest.h>

using namespace ingot;
using namespace ingot::server;

namespace {

bool contains(const std::string &text, const std::string &line) {
  return text.find(line) != std::string::npos;
}

ModelInfo tinyModel() {
  ModelInfo m;
  m.names = {"tiny"};
  m.context = 32;
  m.vocab = 100;
  return m;
}

} // namespace

TEST(Histogram, BucketsAreCumulativeWithInfAndSum) {
  Histogram h({0.1, 1.0});
  h.observe(0.05);
  h.observe(0.1); // on a bound: counted in that bucket (le = less or equal)
  h.observe(0.5);
  h.observe(30);
  std::string out;
  h.render("x_seconds", "help", &out);
  EXPECT_TRUE(contains(out, "# TYPE x_seconds histogram\n"));
  EXPECT_TRUE(contains(out, "x_seconds_bucket{le=\"0.1\"} 2\n"));
  EXPECT_TRUE(contains(out, "x_seconds_bucket{le=\"1\"} 3\n"));
  EXPECT_TRUE(contains(out, "x_seconds_bucket{le=\"+Inf\"} 4\n"));
  EXPECT_TRUE(contains(out, "x_seconds_sum 30.65\n"));
  EXPECT_TRUE(contains(out, "x_seconds_count 4\n"));
}

TEST(ServerMetrics, RendersEngineGaugesAndRequestCounters) {
  ServerMetrics m;
  m.requestFinished("stop", 0.02, 0.52, 11); // TPOT (0.52-0.02)/10 = 0.05
  m.requestFinished("abort", 0, 0.01, 0);    // no token: no TTFT sample
  m.httpResponse("/v1/completions", 200);
  m.httpResponse("/v1/completions", 400);
  EngineStats s;
  s.kvBlocksTotal = 8;
  s.kvBlocksUsed = 2;
  s.runningRequests = 3;
  s.generatedTokens = 11;
  std::string out = m.render(s, 5);
  EXPECT_TRUE(contains(out, "ingot_requests_running 3\n"));
  EXPECT_TRUE(contains(out, "ingot_requests_waiting 5\n"));
  EXPECT_TRUE(contains(out, "ingot_kv_cache_usage_ratio 0.25\n"));
  EXPECT_TRUE(contains(out, "ingot_generation_tokens_total 11\n"));
  EXPECT_TRUE(contains(out, "ingot_time_to_first_token_seconds_count 1\n"));
  EXPECT_TRUE(contains(out, "ingot_time_per_output_token_seconds_sum 0.05\n"));
  EXPECT_TRUE(contains(out, "ingot_e2e_request_latency_seconds_count 2\n"));
  EXPECT_TRUE(contains(
      out, "ingot_requests_finished_total{finish_reason=\"abort\"} 1\n"));
  EXPECT_TRUE(contains(
      out, "ingot_requests_finished_total{finish_reason=\"length\"} 0\n"));
  EXPECT_TRUE(contains(out, "ingot_http_requests_total{path=\"/v1/"
                            "completions\",status=\"400\"} 1\n"));
}

TEST(OpenAiRequest, TokenPromptsAndSamplingFields) {
  CompletionRequest r;
  ApiError e;
  ASSERT_TRUE(parseCompletionRequest(
      R"({"prompt": [[1, 2, 3], [4]], "max_tokens": 5, "temperature": 0.5,
          "top_k": -1, "seed": 9, "stop": "x", "logprobs": 2,
          "frequency_penalty": null, "user": "ignored"})",
      false, tinyModel(), &r, &e))
      << e.message;
  ASSERT_EQ(r.choices.size(), 2u);
  EXPECT_EQ(r.choices[0].promptTokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(r.choices[1].maxNewTokens, 5);
  EXPECT_EQ(r.choices[1].sampling.temperature, 0.5);
  EXPECT_EQ(r.choices[1].sampling.topK, 0);
  EXPECT_EQ(r.choices[1].sampling.seed, 9u);
  EXPECT_EQ(r.choices[1].logprobs, 2);
  EXPECT_EQ(r.choices[1].stopStrings, (std::vector<std::string>{"x"}));
  EXPECT_EQ(r.model, "tiny");
}

TEST(OpenAiRequest, DefaultBudgetIsSixteenOrWhatTheContextLeaves) {
  CompletionRequest r;
  ApiError e;
  ASSERT_TRUE(parseCompletionRequest(R"({"prompt": [1, 2]})", false,
                                     tinyModel(), &r, &e));
  EXPECT_EQ(r.choices[0].maxNewTokens, 16);
  std::string prompt = "[";
  for (int i = 0; i < 25; ++i)
    prompt += std::to_string(i + 1) + (i < 24 ? "," : "]");
  ASSERT_TRUE(parseCompletionRequest("{\"prompt\": " + prompt + "}", false,
                                     tinyModel(), &r, &e));
  EXPECT_EQ(r.choices[0].maxNewTokens, 7); // 32 - 25
}

TEST(OpenAiRequest, RefusalsNameTheField) {
  struct Case {
    const char *body, *param;
  };
  for (Case c : {Case{R"({"prompt": [1], "top_p": 1.5})", "top_p"},
                 Case{R"({"prompt": [1], "seed": 1e30})", "seed"},
                 Case{R"({"prompt": [1], "max_tokens": 32})", "max_tokens"},
                 Case{R"({"prompt": [1, 100]})", "prompt"},
                 Case{R"({"prompt": [1], "n": 3})", "n"},
                 Case{R"({"prompt": [1], "model": "other"})", "model"},
                 Case{R"({"prompt": [1], "ignore_eos": 1})", "ignore_eos"}}) {
    CompletionRequest r;
    ApiError e;
    EXPECT_FALSE(parseCompletionRequest(c.body, false, tinyModel(), &r, &e))
        << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << ": " << e.message;
    EXPECT_EQ(e.status, 400);
  }
}

TEST(OpenAiRequest, NestingDepthIgnoresBracketsInStrings) {
  EXPECT_EQ(jsonNestingDepth(R"({"a": "[[[[{{", "b": [[1]]})"), 3);
  EXPECT_EQ(jsonNestingDepth(R"({"a": "\"[[["})"), 1);
  std::string deep(100000, '[');
  CompletionRequest r;
  ApiError e;
  EXPECT_FALSE(parseCompletionRequest(deep, false, tinyModel(), &r, &e));
  EXPECT_NE(e.message.find("nests deeper"), std::string::npos);
}
