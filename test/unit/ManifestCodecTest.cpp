//===- ManifestCodecTest.cpp - Manifest wire format round trip and fuzz ---===//
#include "SampleArtifact.h"

#include <gtest/gtest.h>
#include <random>

using namespace ingot;
using namespace ingot::testing;

namespace {

/// Every LLM field away from its default (and a few awkward values).
Manifest sampleLlmManifest() {
  Manifest m = sampleManifest();
  m.hasLlm = true;
  LlmConfig &l = m.llm;
  l.architecture = "LlamaForCausalLM";
  l.numLayers = 30, l.hiddenSize = 576, l.numHeads = 9, l.numKvHeads = 3;
  l.headDim = 64, l.vocabSize = 49152, l.maxPositions = 8192;
  l.blockSize = 32, l.maxTokensPerStep = 256, l.maxSeqs = 64;
  l.maxBlocksPerSeq = 256, l.kvDtype = DType::BF16;
  l.kvLayout = "block,head,token,dim";
  TokenizerData &t = m.tokenizer;
  t.vocab = {"a", "b", "", "ab", std::string("\0\xff", 2), "\xc4\xa0"};
  t.merges = {{0, 1}, {5, 3}, {INT32_MAX, 0}};
  t.addedTokens = {{2, "<|im_start|>", true}, {0, "x", false}};
  t.pretokenizer = "llama3+ignore_merges";
  t.bosId = 2, t.eosId = 0, t.addBos = true;
  t.chatTemplate = "chatml:You are helpful.";
  GenerationDefaults &g = m.generation;
  g.temperature = 0.0, g.topK = 50, g.topP = 0.95;
  g.eosIds = {0, 2, 3}, g.maxNewTokens = 0;
  return m;
}

void expectSameLlm(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.hasLlm, b.hasLlm);
  const LlmConfig &x = a.llm, &y = b.llm;
  EXPECT_EQ(x.architecture, y.architecture);
  EXPECT_EQ(x.numLayers, y.numLayers);
  EXPECT_EQ(x.hiddenSize, y.hiddenSize);
  EXPECT_EQ(x.numHeads, y.numHeads);
  EXPECT_EQ(x.numKvHeads, y.numKvHeads);
  EXPECT_EQ(x.headDim, y.headDim);
  EXPECT_EQ(x.vocabSize, y.vocabSize);
  EXPECT_EQ(x.maxPositions, y.maxPositions);
  EXPECT_EQ(x.blockSize, y.blockSize);
  EXPECT_EQ(x.maxTokensPerStep, y.maxTokensPerStep);
  EXPECT_EQ(x.maxSeqs, y.maxSeqs);
  EXPECT_EQ(x.maxBlocksPerSeq, y.maxBlocksPerSeq);
  EXPECT_EQ(x.kvDtype, y.kvDtype);
  EXPECT_EQ(x.kvLayout, y.kvLayout);
  const TokenizerData &p = a.tokenizer, &q = b.tokenizer;
  EXPECT_EQ(p.vocab, q.vocab);
  EXPECT_EQ(p.merges, q.merges);
  ASSERT_EQ(p.addedTokens.size(), q.addedTokens.size());
  for (size_t i = 0; i < p.addedTokens.size(); ++i) {
    EXPECT_EQ(p.addedTokens[i].id, q.addedTokens[i].id);
    EXPECT_EQ(p.addedTokens[i].content, q.addedTokens[i].content);
    EXPECT_EQ(p.addedTokens[i].special, q.addedTokens[i].special);
  }
  EXPECT_EQ(p.pretokenizer, q.pretokenizer);
  EXPECT_EQ(p.bosId, q.bosId);
  EXPECT_EQ(p.eosId, q.eosId);
  EXPECT_EQ(p.addBos, q.addBos);
  EXPECT_EQ(p.chatTemplate, q.chatTemplate);
  const GenerationDefaults &g = a.generation, &h = b.generation;
  EXPECT_TRUE(sameBits(g.temperature, h.temperature));
  EXPECT_EQ(g.topK, h.topK);
  EXPECT_TRUE(sameBits(g.topP, h.topP));
  EXPECT_EQ(g.eosIds, h.eosIds);
  EXPECT_EQ(g.maxNewTokens, h.maxNewTokens);
}

TEST(ManifestCodecTest, RoundTripsEveryLlmField) {
  Manifest m = sampleLlmManifest();
  std::vector<uint8_t> bytes = encodeManifest(m);
  Manifest got;
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  ASSERT_TRUE(st) << st.message();
  expectSameManifest(m, got);
  expectSameLlm(m, got);
  EXPECT_EQ(encodeManifest(got), bytes);
  // Defaults inside the LLM parts encode to nothing but has_llm itself.
  Manifest d;
  d.hasLlm = true;
  EXPECT_EQ(encodeManifest(d), (std::vector<uint8_t>{0x60, 0x01}));
}

TEST(ManifestCodecTest, NamesWhatIsWrongInTheLlmParts) {
  auto decodeError = [](std::vector<uint8_t> bytes) {
    Manifest got;
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    EXPECT_FALSE(st);
    return st.message();
  };
  // has_llm = 2
  EXPECT_EQ(decodeError({0x60, 0x02}), "malformed manifest: invalid bool");
  // llm.kv_dtype = 77
  EXPECT_EQ(decodeError({0x6a, 0x02, 0x68, 77}),
            "malformed manifest at llm: invalid dtype");
  // tokenizer.merges with an odd count: packed {1, 2, 3}
  EXPECT_EQ(decodeError({0x72, 0x05, 0x12, 0x03, 1, 2, 3}),
            "malformed manifest at tokenizer: merges hold an odd number of "
            "ids");
  // tokenizer.merges holding 2^40
  EXPECT_EQ(
      decodeError({0x72, 0x08, 0x12, 0x06, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}),
      "malformed manifest at tokenizer: id out of range for int32");
  // tokenizer.added_tokens[0].special = 5
  EXPECT_EQ(decodeError({0x72, 0x04, 0x1a, 0x02, 0x18, 0x05}),
            "malformed manifest at tokenizer.added_tokens[0]: invalid bool");
  // generation.temperature as a varint
  EXPECT_EQ(decodeError({0x7a, 0x02, 0x08, 0x01}),
            "malformed manifest at generation: field has the wrong wire type");
  // a vocab entry claiming 2^31 bytes must not allocate
  EXPECT_NE(decodeError({0x72, 0x07, 0x0a, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00})
                .find("runs past the end"),
            std::string::npos);
}

TEST(ManifestCodecTest, MutatedLlmManifestsNeverCrash) {
  std::vector<uint8_t> good = encodeManifest(sampleLlmManifest());
  std::mt19937_64 rng(11);
  Manifest got;
  int ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes = good;
    for (int e = 0, edits = 1 + int(rng() % 3); e < edits; ++e) {
      size_t pos = rng() % bytes.size();
      if (rng() % 3 == 0)
        bytes.resize(pos + 1);
      else
        bytes[pos] = uint8_t(rng());
    }
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    ok += bool(st);
    if (!st) {
      EXPECT_EQ(st.message().rfind("malformed manifest", 0), 0u);
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_LT(ok, 20000);
}

TEST(ManifestCodecTest, RoundTripsEveryField) {
  Manifest m = sampleManifest();
  m.tensors[0].offset = 4096, m.tensors[0].bytes = 48;
  m.formatVersion = 3;
  m.memory.weightsBytes = 123456789012345;
  m.steps[0].attrs[1].f = -0.0; // a default value, but not the same bits
  m.buffers[2].tensorIndex = 0;
  std::vector<uint8_t> bytes = encodeManifest(m);
  Manifest got;
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  ASSERT_TRUE(st) << st.message();
  expectSameManifest(m, got);
  EXPECT_EQ(encodeManifest(got), bytes);
}

TEST(ManifestCodecTest, DefaultsEncodeToNothing) {
  EXPECT_TRUE(encodeManifest(Manifest()).empty());
  Manifest got;
  got.modelName = "stale";
  ASSERT_TRUE(decodeManifest(nullptr, 0, &got));
  expectSameManifest(Manifest(), got);
}

TEST(ManifestCodecTest, SkipsUnknownFieldsAndAcceptsUnpacked) {
  // field 99 varint, field 98 fixed32, field 97 bytes; then field 5 tensor
  // with shape as unpacked varints (field 3, wire type 0).
  std::vector<uint8_t> bytes = {0x98, 0x06, 0x05, 0x95, 0x06, 1,   2,
                                3,    4,    0x8a, 0x06, 0x02, 'h', 'i',
                                0x2a, 0x04, 0x18, 0x02, 0x18, 0x03};
  Manifest got;
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(got.tensors.size(), 1u);
  EXPECT_EQ(got.tensors[0].shape, (std::vector<int64_t>{2, 3}));
}

TEST(ManifestCodecTest, NamesWhatIsWrong) {
  auto decodeError = [](std::vector<uint8_t> bytes) {
    Manifest got;
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    EXPECT_FALSE(st);
    return st.message();
  };
  // tensors[0] with dtype 77
  EXPECT_EQ(decodeError({0x2a, 0x02, 0x10, 77}),
            "malformed manifest at tensors[0]: invalid dtype");
  // steps[0] holding an attr whose length runs past the step
  EXPECT_EQ(decodeError({0x3a, 0x02, 0x22, 0x05}),
            "malformed manifest at steps[0]: length-delimited field runs past "
            "the end of its message");
  // steps[0].attrs[0] with kind 9
  EXPECT_EQ(decodeError({0x3a, 0x04, 0x22, 0x02, 0x10, 0x09}),
            "malformed manifest at steps[0].attrs[0]: invalid attribute kind");
  // a huge length must not allocate
  EXPECT_NE(decodeError({0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                         0xff, 0x01})
                .find("runs past the end"),
            std::string::npos);
  EXPECT_NE(decodeError({0x08}).find("truncated varint"), std::string::npos);
  EXPECT_NE(decodeError({0x0b}).find("wire type"), std::string::npos);
  EXPECT_NE(decodeError({0x00}).find("invalid field number"),
            std::string::npos);
  // buffers[0].kind = 4
  EXPECT_NE(decodeError({0x32, 0x02, 0x10, 0x04}).find("buffer kind"),
            std::string::npos);
  // inputs[0].dims[0] with a string where an int belongs
  EXPECT_EQ(decodeError({0x42, 0x04, 0x1a, 0x02, 0x0a, 0x00}),
            "malformed manifest at inputs[0].dims[0]: field has the wrong "
            "wire type");
}

TEST(ManifestCodecTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(42);
  Manifest got;
  int ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes(rng() % 300);
    for (uint8_t &b : bytes)
      b = uint8_t(rng());
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    ok += bool(st);
    if (!st) {
      EXPECT_FALSE(st.message().empty());
    }
  }
  EXPECT_LT(ok, 20000);
}

TEST(ManifestCodecTest, MutatedManifestsNeverCrash) {
  std::vector<uint8_t> good = encodeManifest(sampleManifest());
  std::mt19937_64 rng(7);
  Manifest got;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes = good;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      size_t pos = rng() % bytes.size();
      switch (rng() % 4) {
      case 0:
        bytes[pos] ^= uint8_t(1u << (rng() % 8));
        break;
      case 1:
        bytes[pos] = uint8_t(rng());
        break;
      case 2:
        bytes.resize(pos);
        break;
      case 3:
        bytes.insert(bytes.begin() + pos, uint8_t(rng()));
        break;
      }
    }
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    if (!st) {
      EXPECT_EQ(st.message().rfind("malformed manifest", 0), 0u);
    }
  }
}

} // namespace
