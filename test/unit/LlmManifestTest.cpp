//===- LlmManifestTest.cpp - Validation of the LLM parts of a manifest ----===//
#include "ingot/Artifact.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <unistd.h>

using namespace ingot;

namespace {

/// A tokenizer-only LLM manifest: no tensors, buffers or steps.
Manifest llmManifest() {
  Manifest m;
  m.targets = {"cpu"};
  m.hasLlm = true;
  LlmConfig &l = m.llm;
  l.numLayers = 2, l.hiddenSize = 8, l.numHeads = 4, l.numKvHeads = 2;
  l.headDim = 2, l.vocabSize = 6, l.maxPositions = 64;
  l.maxTokensPerStep = 8, l.maxSeqs = 2, l.maxBlocksPerSeq = 4;
  TokenizerData &t = m.tokenizer;
  t.vocab = {"a", "b", "ab", "", ""};
  t.merges = {{0, 1}};
  t.addedTokens = {{3, "<s>", true}, {4, "</s>", true}};
  t.bosId = 3, t.eosId = 4;
  t.pretokenizer = "gpt2-digits+nfc";
  t.chatTemplate = "chatml:Be nice.";
  m.generation.eosIds = {4, 5};
  return m;
}

class LlmManifestTest : public ::testing::Test {
protected:
  std::string path_ =
      ::testing::TempDir() + "llm-" + std::to_string(::getpid()) + ".ingot";
  void TearDown() override { std::remove(path_.c_str()); }

  /// The writer's complaint about the manifest after `edit` ("" if none).
  std::string writeError(const std::function<void(Manifest &)> &edit) {
    Manifest m = llmManifest();
    edit(m);
    Status s = ArtifactWriter(m).write(path_);
    if (s)
      return "";
    const std::string prefix = path_ + ": invalid manifest: ";
    EXPECT_EQ(s.message().rfind(prefix, 0), 0u) << s.message();
    return s.message().substr(prefix.size());
  }
};

TEST_F(LlmManifestTest, TokenizerOnlyArtifactRoundTrips) {
  ASSERT_EQ(writeError([](Manifest &) {}), "");
  std::unique_ptr<Artifact> art;
  Status s = Artifact::open(path_, &art);
  ASSERT_TRUE(s) << s.message();
  const Manifest &m = art->manifest();
  EXPECT_TRUE(m.hasLlm);
  EXPECT_TRUE(m.steps.empty());
  EXPECT_EQ(m.tokenizer.vocab, llmManifest().tokenizer.vocab);
  EXPECT_EQ(m.tokenizer.chatTemplate, "chatml:Be nice.");
  EXPECT_EQ(m.llm.numKvHeads, 2);
  EXPECT_EQ(m.generation.eosIds, (std::vector<int32_t>{4, 5}));
}

TEST_F(LlmManifestTest, RefusesBadGeometry) {
  EXPECT_EQ(writeError([](Manifest &m) { m.llm.headDim = 0; }),
            "LLM config: head_dim is 0; it must be positive");
  EXPECT_EQ(writeError([](Manifest &m) { m.llm.maxSeqs = -3; }),
            "LLM config: max_seqs is -3; it must be positive");
  EXPECT_EQ(writeError([](Manifest &m) { m.llm.numKvHeads = 3; }),
            "LLM config: num_heads 4 is not a multiple of num_kv_heads 3");
  // Without hasLlm nothing of it is checked.
  EXPECT_EQ(writeError([](Manifest &m) {
              m.hasLlm = false;
              m.llm.numKvHeads = 3;
            }),
            "");
}

TEST_F(LlmManifestTest, RefusesTokenizerIdsOutOfRange) {
  EXPECT_EQ(writeError([](Manifest &m) { m.tokenizer.vocab.clear(); }),
            "tokenizer: 0 token ids, but the model's vocabulary has 6 (must "
            "be 1 to that many)");
  EXPECT_EQ(writeError([](Manifest &m) { m.llm.vocabSize = 4; }),
            "tokenizer: 5 token ids, but the model's vocabulary has 4 (must "
            "be 1 to that many)");
  EXPECT_EQ(writeError([](Manifest &m) {
              m.tokenizer.merges.push_back({1, 5});
            }),
            "tokenizer: merge 1 (1, 5) refers to an id outside the "
            "vocabulary of 5");
  EXPECT_EQ(writeError([](Manifest &m) {
              m.tokenizer.addedTokens.push_back({-1, "x", false});
            }),
            "tokenizer: added token -1 'x' is empty or outside the "
            "vocabulary of 5");
  EXPECT_EQ(
      writeError([](Manifest &m) { m.tokenizer.addedTokens[0].content = ""; }),
      "tokenizer: added token 3 '' is empty or outside the vocabulary "
      "of 5");
  EXPECT_EQ(writeError([](Manifest &m) { m.tokenizer.eosId = 5; }),
            "tokenizer: BOS/EOS id 5 is outside the vocabulary of 5");
  EXPECT_EQ(writeError([](Manifest &m) { m.tokenizer.bosId = -1; }), "");
}

TEST_F(LlmManifestTest, RefusesUnknownPreTokenizerAndTemplate) {
  EXPECT_NE(writeError([](Manifest &m) {
              m.tokenizer.pretokenizer = "bert";
            }).find("unknown pre-tokenizer 'bert'"),
            std::string::npos);
  EXPECT_NE(writeError([](Manifest &m) {
              m.tokenizer.pretokenizer = "llama3+lowercase";
            }).find("unknown or repeated pre-tokenizer option 'lowercase'"),
            std::string::npos);
  EXPECT_EQ(
      writeError([](Manifest &m) { m.tokenizer.chatTemplate = "zephyr"; }),
      "tokenizer: unknown chat template 'zephyr' (supported: chatml, "
      "llama3)");
  for (const char *ok : {"", "chatml", "llama3", "chatml:"})
    EXPECT_EQ(writeError([&](Manifest &m) { m.tokenizer.chatTemplate = ok; }),
              "");
}

TEST_F(LlmManifestTest, RefusesBadGenerationDefaults) {
  EXPECT_NE(writeError([](Manifest &m) {
              m.generation.topP = 0;
            }).find("generation defaults out of range"),
            std::string::npos);
  EXPECT_NE(writeError([](Manifest &m) {
              m.generation.temperature = -1;
            }).find("generation defaults out of range"),
            std::string::npos);
  EXPECT_EQ(writeError([](Manifest &m) { m.generation.eosIds = {6}; }),
            "generation: EOS id 6 is outside the model's vocabulary of 6");
}

} // namespace
