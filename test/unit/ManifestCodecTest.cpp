//===- ManifestCodecTest.cpp - Manifest FlatBuffers round trip and refusal ===//
//
// Round trips (the sample manifests and one with every field random and
// away from its default, so that a field the schema or the codec forgets
// fails), determinism, and what the decoder refuses: values outside an
// enum or range, truncations, bit flips, random bytes. Manifests the
// encoder could never write are in ManifestHostileTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "ManifestRandom.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <random>

using namespace ingot;
using namespace ingot::testing;

namespace {

// A tripwire for fields added to the structs but not to this test (and so
// perhaps not to manifest.fbs): their sizes on the one ABI CI uses. Padding
// can hide a small field, so the random round trip below is the real check.
#if defined(__GLIBCXX__) && defined(__x86_64__)
static_assert(sizeof(TensorEntry) == 168 && sizeof(Dim) == 40 &&
                  sizeof(Buffer) == 96 && sizeof(Attr) == 136 &&
                  sizeof(Step) == 136 && sizeof(IoSpec) == 72 &&
                  sizeof(SymbolBound) == 40 && sizeof(MemorySummary) == 48 &&
                  sizeof(LlmConfig) == 160 && sizeof(TokenizerData) == 256 &&
                  sizeof(TokenizerData::AddedToken) == 48 &&
                  sizeof(GenerationDefaults) == 56 && sizeof(GpuArg) == 12 &&
                  sizeof(GpuKernel) == 104 && sizeof(CodeObject) == 56 &&
                  sizeof(GpuTarget) == 80 && sizeof(WeightTransform) == 40 &&
                  sizeof(SourceTensor) == 96 && sizeof(Manifest) == 848,
              "a Manifest struct changed: update format/schema/manifest.fbs, "
              "ManifestEncode.cpp, ManifestDecode.cpp, randomManifest() and "
              "expectSameManifest/expectSameLlm, then these sizes");
#endif

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

void expectRoundTrip(const Manifest &m) {
  std::vector<uint8_t> bytes = encodeManifest(m);
  Manifest got;
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  ASSERT_TRUE(st) << st.message();
  expectSameManifest(m, got);
  expectSameLlm(m, got);
  EXPECT_EQ(encodeManifest(got), bytes) << "re-encoding changed the bytes";
}

/// A refusal names the manifest, whichever check refused it.
bool isManifestError(const std::string &msg) {
  return msg.rfind("malformed manifest", 0) == 0 ||
         msg == "manifest: not a valid ingot manifest (FlatBuffers "
                "verification failed)";
}

TEST(ManifestCodecTest, RoundTripsEveryFieldWithRandomValues) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    expectRoundTrip(randomManifest(seed));
  }
}

TEST(ManifestCodecTest, RoundTripsTheSamples) {
  expectRoundTrip(sampleManifest());
  expectRoundTrip(sampleLlmManifest());
  Manifest m = sampleManifest();
  m.steps[0].attrs[1].f = -0.0; // equal to the default 0.0, not the same bits
  m.generation.temperature = std::numeric_limits<double>::quiet_NaN();
  m.generation.topP = -0.0;
  expectRoundTrip(m);
}

TEST(ManifestCodecTest, EmptyStringsWhereTheDefaultIsNotEmpty) {
  Manifest m = sampleManifest();
  m.tensors[0].layout = "";
  m.llm.kvLayout = "";
  m.tokenizer.model = "";
  m.tokenizer.pretokenizer = "";
  expectRoundTrip(m);
}

TEST(ManifestCodecTest, DefaultsRoundTripAndAreSmall) {
  EXPECT_EQ(Manifest().formatVersion, kArtifactFormatVersion);
  std::vector<uint8_t> bytes = encodeManifest(Manifest());
  EXPECT_LT(bytes.size(), 128u) << "defaults should be mostly absent fields";
  Manifest got;
  got.modelName = "stale";
  ASSERT_TRUE(decodeManifest(bytes.data(), bytes.size(), &got));
  expectSameManifest(Manifest(), got);
  expectSameLlm(Manifest(), got);
}

TEST(ManifestCodecTest, IsDeterministic) {
  const Manifest m = randomManifest(99);
  const std::vector<uint8_t> bytes = encodeManifest(m);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(encodeManifest(Manifest(m)), bytes);
}

TEST(ManifestCodecTest, NamesValuesOutsideTheirRange) {
  auto decodeError = [](const Manifest &m) {
    std::vector<uint8_t> bytes = encodeManifest(m);
    Manifest got;
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    EXPECT_FALSE(st);
    return st.message();
  };
  Manifest m = sampleLlmManifest();
  m.tensors[0].dtype = DType(77);
  EXPECT_EQ(decodeError(m), "malformed manifest at tensors[0]: invalid dtype "
                            "77 (expected 1 to 26, ingot/DType.h)");
  m = sampleLlmManifest();
  m.tensors[3].groupSize = -1;
  EXPECT_EQ(decodeError(m), "malformed manifest at tensors[3]: group size -1 "
                            "out of range (expected 0 to 2^40)");
  m.tensors[3].groupSize = (int64_t(1) << 40) + 1;
  EXPECT_NE(decodeError(m).find("group size 1099511627777 out of range"),
            std::string::npos);
  m = sampleLlmManifest();
  m.buffers[1].kind = BufferKind(5);
  EXPECT_EQ(decodeError(m),
            "malformed manifest at buffers[1]: invalid buffer kind 5 "
            "(expected 1 input, 2 param, 3 arena or 4 dynamic)");
  m = sampleLlmManifest();
  m.steps[0].attrs[2].kind = Attr::Kind(9);
  EXPECT_EQ(decodeError(m),
            "malformed manifest at steps[0].attrs[2]: invalid attribute kind 9 "
            "(expected 1 to 5: int, float, ints, floats, str)");
  m = sampleLlmManifest();
  m.outputs[0].dtype = DType(0);
  EXPECT_NE(decodeError(m).find("at outputs[0]: invalid dtype 0"),
            std::string::npos);
  m = sampleLlmManifest();
  m.llm.kvDtype = DType(kLastDType + 1);
  EXPECT_NE(decodeError(m).find("at llm: invalid dtype " +
                                std::to_string(kLastDType + 1)),
            std::string::npos);
}

TEST(ManifestCodecTest, RefusesEveryTruncationThatLosesData) {
  const Manifest m = sampleLlmManifest();
  const std::vector<uint8_t> good = encodeManifest(m);
  int refused = 0;
  for (size_t len = 0; len < good.size(); ++len) {
    std::vector<uint8_t> bytes(good.begin(), good.begin() + len);
    Manifest got;
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    if (st) {
      // The buffer may end in the builder's alignment padding (before the
      // first string it wrote): cutting only zeros loses nothing.
      SCOPED_TRACE("truncated to " + std::to_string(len));
      EXPECT_LT(good.size() - len, 4u);
      EXPECT_TRUE(std::all_of(good.begin() + len, good.end(),
                              [](uint8_t b) { return b == 0; }));
      expectSameManifest(m, got);
      expectSameLlm(m, got);
      continue;
    }
    ++refused;
    EXPECT_TRUE(isManifestError(st.message())) << st.message();
  }
  EXPECT_GE(refused, int(good.size()) - 3);
}

TEST(ManifestCodecTest, BitFlipsNeverCrash) {
  const std::vector<uint8_t> good = encodeManifest(sampleLlmManifest());
  int refused = 0;
  for (size_t bit = 0; bit < good.size() * 8; ++bit) {
    std::vector<uint8_t> bytes = good;
    bytes[bit / 8] ^= uint8_t(1u << (bit % 8));
    Manifest got;
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    if (!st) {
      ++refused;
      EXPECT_TRUE(isManifestError(st.message())) << st.message();
    } else {
      encodeManifest(got); // whatever decoded is a usable Manifest
    }
  }
  // Flips in offsets, lengths and the identifier are caught; flips inside a
  // scalar or a string give another manifest, for validateManifest to judge.
  EXPECT_GT(refused, int(good.size()));
  EXPECT_LT(refused, int(good.size() * 8));
}

TEST(ManifestCodecTest, RandomAndMutatedBytesNeverCrash) {
  const std::vector<uint8_t> good = encodeManifest(sampleLlmManifest());
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes;
    if (iter % 2) { // random bytes behind a real root offset and identifier
      bytes.resize(8 + rng() % 300);
      for (uint8_t &b : bytes)
        b = uint8_t(rng());
      std::copy(good.begin(), good.begin() + 8, bytes.begin());
    } else { // a real manifest with a few bytes changed, cut or inserted
      bytes = good;
      for (int e = 0, edits = 1 + int(rng() % 4); e < edits; ++e) {
        size_t pos = rng() % bytes.size();
        switch (rng() % 3) {
        case 0:
          bytes[pos] = uint8_t(rng());
          break;
        case 1:
          bytes.resize(std::max<size_t>(pos, 1));
          break;
        case 2:
          bytes.insert(bytes.begin() + pos, uint8_t(rng()));
          break;
        }
      }
    }
    Manifest got;
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    if (!st) {
      EXPECT_TRUE(isManifestError(st.message())) << st.message();
    }
  }
}

} // namespace
