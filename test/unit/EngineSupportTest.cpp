//===- EngineSupportTest.cpp - Engine helpers that need no model ----------===//
#include "engine/EngineSupport.h"
#include "engine/TextStream.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ingot;
using namespace ingot::engine;

namespace {

LlmConfig tinyConfig() {
  LlmConfig c;
  c.numLayers = 2;
  c.numKvHeads = 2;
  c.headDim = 8;
  c.vocabSize = 100;
  c.maxPositions = 64;
  c.blockSize = 4;
  c.maxTokensPerStep = 16;
  c.maxSeqs = 8;
  c.maxBlocksPerSeq = 8; // 32 tokens: the block table is the tighter bound
  return c;
}

std::string all(TextStream &t, const std::vector<std::string> &pieces,
                bool *stopped) {
  std::string out;
  for (const std::string &p : pieces) {
    out += t.push(p, stopped);
    if (*stopped)
      return out;
  }
  return out + t.flush();
}

TEST(TextStream, StopsBeforeTheStopStringAcrossTokens) {
  TextStream t({"STOP"});
  bool stopped = false;
  EXPECT_EQ(t.push("Hello S", &stopped), "Hello "); // "S" may start "STOP"
  EXPECT_FALSE(stopped);
  EXPECT_EQ(t.push("T", &stopped), "");
  EXPECT_EQ(t.push("OP and more", &stopped), "");
  EXPECT_TRUE(stopped);
}

TEST(TextStream, ReleasesHeldTextWhenItIsNoStop) {
  TextStream t({"STOP"});
  bool stopped = false;
  EXPECT_EQ(all(t, {"a ST", "x", " b"}, &stopped), "a STx b");
  EXPECT_FALSE(stopped);
  TextStream u({"END"});
  EXPECT_EQ(all(u, {"x E", "N"}, &stopped), "x EN"); // flushed at the end
}

TEST(TextStream, KeepsUtf8WholeAndReplacesBrokenTails) {
  TextStream t({});
  bool stopped = false;
  EXPECT_EQ(t.push("\xc3", &stopped), "");
  EXPECT_EQ(t.push("\xa9!", &stopped), "\xc3\xa9!");
  EXPECT_EQ(t.push("\xe2\x82", &stopped), "");
  EXPECT_EQ(t.flush(), "\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(TextStream, EarliestOfSeveralStops) {
  TextStream t({"world", "lo"});
  bool stopped = false;
  EXPECT_EQ(all(t, {"hello world"}, &stopped), "hel");
  EXPECT_TRUE(stopped);
}

TEST(EngineSupport, ValidationNamesTheProblem) {
  LlmConfig c = tinyConfig();
  RequestParams r;
  std::vector<int32_t> ok = {1, 2, 3};
  EXPECT_TRUE(validateRequest(r, ok, c).isOk());
  auto message = [&](RequestParams p, std::vector<int32_t> prompt) {
    Status s = validateRequest(p, prompt, c);
    EXPECT_FALSE(s.isOk());
    return s.message();
  };
  EXPECT_NE(message(r, {}).find("empty"), std::string::npos);
  EXPECT_NE(message(r, {1, 100}).find("token 100"), std::string::npos);
  EXPECT_NE(message(r, {-1}).find("token -1"), std::string::npos);
  EXPECT_NE(message(r, std::vector<int32_t>(32, 1)).find("context holds 32"),
            std::string::npos);
  EXPECT_TRUE(validateRequest(r, std::vector<int32_t>(31, 1), c).isOk());
  RequestParams p = r;
  p.sampling.temperature = -0.5;
  EXPECT_NE(message(p, ok).find("temperature"), std::string::npos);
  p = r;
  p.sampling.temperature = NAN;
  EXPECT_NE(message(p, ok).find("temperature"), std::string::npos);
  p = r;
  p.sampling.topP = 1.5;
  EXPECT_NE(message(p, ok).find("top_p"), std::string::npos);
  p = r;
  p.sampling.topK = -1;
  EXPECT_NE(message(p, ok).find("top_k"), std::string::npos);
  p = r;
  p.sampling.minP = 2;
  EXPECT_NE(message(p, ok).find("min_p"), std::string::npos);
  p = r;
  p.sampling.repetitionPenalty = 0;
  EXPECT_NE(message(p, ok).find("repetition_penalty"), std::string::npos);
  p = r;
  p.maxNewTokens = -3;
  EXPECT_NE(message(p, ok).find("max_new_tokens"), std::string::npos);
  p = r;
  p.stopTokenIds = {500};
  EXPECT_NE(message(p, ok).find("stop token"), std::string::npos);
  p = r;
  p.stopStrings = {""};
  EXPECT_NE(message(p, ok).find("stop string"), std::string::npos);
}

TEST(EngineSupport, LimitsAndBudget) {
  LlmConfig c = tinyConfig();
  StepLimits l;
  EngineOptions o;
  ASSERT_TRUE(resolveLimits(c, o, &l).isOk());
  EXPECT_EQ(l.maxTokensPerStep, 16);
  EXPECT_EQ(l.maxSeqs, 8);
  EXPECT_GE(l.kvBlocks, c.maxBlocksPerSeq); // default: one full sequence
  EXPECT_LE(l.kvBlocks, 8 * c.maxBlocksPerSeq);
  o.kvBlocks = 3; // explicit budgets are kept
  o.maxTokensPerStep = 4;
  ASSERT_TRUE(resolveLimits(c, o, &l).isOk());
  EXPECT_EQ(l.kvBlocks, 3);
  EXPECT_EQ(l.maxSeqs, 4); // every running sequence decodes each step
  o = EngineOptions();
  o.kvCacheMb = 1; // 1 MiB / (2 layers * 2 * 4 tokens * 2 heads * 8 * 4 B)
  ASSERT_TRUE(resolveLimits(c, o, &l).isOk());
  EXPECT_EQ(l.kvBlocks, (1 << 20) / 1024);
  o = EngineOptions();
  o.maxSeqs = 9;
  EXPECT_FALSE(resolveLimits(c, o, &l).isOk());
  o = EngineOptions();
  o.maxTokensPerStep = 17;
  EXPECT_FALSE(resolveLimits(c, o, &l).isOk());
  EXPECT_EQ(describeBudget(c, 1024),
            "1024 blocks \u00d7 4 tokens = 4096 tokens, 1.0 MiB");
}

} // namespace

TEST(EngineSupport, LogprobsAreLogSoftmaxWithTopAlternatives) {
  std::vector<float> logits = {1.5f, -2.0f, 3.25f, 3.25f, 0.0f, -7.5f};
  double sum = 0;
  for (float x : logits)
    sum += std::exp(double(x));
  TokenEvent e;
  fillLogprobs(logits.data(), int64_t(logits.size()), 4, 3, &e);
  ASSERT_TRUE(e.hasLogprob);
  EXPECT_NEAR(e.logprob, 0.0 - std::log(sum), 1e-6);
  ASSERT_EQ(e.topLogprobs.size(), 3u);
  // Equal logits: the lower id first.
  EXPECT_EQ(e.topLogprobs[0].token, 2);
  EXPECT_EQ(e.topLogprobs[1].token, 3);
  EXPECT_EQ(e.topLogprobs[2].token, 0);
  EXPECT_NEAR(e.topLogprobs[2].logprob, 1.5 - std::log(sum), 1e-6);
  fillLogprobs(logits.data(), int64_t(logits.size()), 5, 0, &e);
  EXPECT_TRUE(e.topLogprobs.empty());
  EXPECT_NEAR(e.logprob, -7.5 - std::log(sum), 1e-5);
}

TEST(EngineSupport, ValidationRefusesTooManyLogprobs) {
  RequestParams r;
  r.logprobs = 21;
  Status s = validateRequest(r, {1, 2}, tinyConfig());
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("logprobs 21"), std::string::npos);
}
