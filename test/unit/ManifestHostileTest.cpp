//===- ManifestHostileTest.cpp - Manifests the encoder never writes -------===//
//
// Built with the generated FlatBuffers builder (ManifestSchema.h): buffers
// that pass the generated Verifier but break a rule of the format (bools
// other than 0 or 1, strings or tables referenced many times over), bytes
// the Verifier must refuse, and what the decoder must still accept
// (misaligned input, fields from a later schema).
//
//===----------------------------------------------------------------------===//
#include "ManifestSchema.h"
#include "SampleArtifact.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace ingot;
using namespace ingot::testing;

namespace {

const char *const kInvalid =
    "manifest: not a valid ingot manifest (FlatBuffers verification failed)";

std::vector<uint8_t> finish(flatbuffers::FlatBufferBuilder &b,
                            flatbuffers::Offset<fb::Manifest> root) {
  b.Finish(root, fb::ManifestIdentifier());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

std::string decodeError(const std::vector<uint8_t> &bytes) {
  Manifest got;
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  EXPECT_FALSE(st);
  return st.message();
}

TEST(ManifestHostileTest, RefusesBoolsOtherThanZeroOrOne) {
  flatbuffers::FlatBufferBuilder b;
  fb::ManifestBuilder mb(b);
  b.AddElement<uint8_t>(fb::Manifest::VT_HAS_LLM, 2);
  EXPECT_EQ(decodeError(finish(b, mb.Finish())),
            "malformed manifest: invalid bool 2 in has_llm (expected 0 or 1)");

  flatbuffers::FlatBufferBuilder c;
  fb::AddedTokenBuilder ab(c);
  c.AddElement<uint8_t>(fb::AddedToken::VT_SPECIAL, 255);
  auto token = ab.Finish();
  auto tokens = c.CreateVector(&token, 1);
  auto tok =
      fb::CreateTokenizerData(c, 0, 0, 0, 0, 0, false, -1, false, tokens);
  fb::ManifestBuilder mc(c);
  mc.add_tokenizer(tok);
  EXPECT_EQ(decodeError(finish(c, mc.Finish())),
            "malformed manifest at tokenizer.added_tokens[0]: invalid bool 255 "
            "in special (expected 0 or 1)");
}

TEST(ManifestHostileTest, RefusesAStringReferencedOverAndOver) {
  // 4 bytes per reference to a 4 KiB string: decoded, 40 KiB of input
  // would become 40 MiB of target names.
  flatbuffers::FlatBufferBuilder b;
  auto big = b.CreateString(std::string(4096, 'x'));
  std::vector<flatbuffers::Offset<flatbuffers::String>> refs(10000, big);
  auto targets = b.CreateVector(refs);
  fb::ManifestBuilder mb(b);
  mb.add_targets(targets);
  EXPECT_EQ(decodeError(finish(b, mb.Finish())),
            "malformed manifest: its strings and vectors add up to more bytes "
            "than the manifest holds (expected each stored once)");
}

/// A manifest whose tokenizer has this vocabulary blob and these ends.
std::vector<uint8_t> vocabManifest(const std::string &text,
                                   const std::vector<uint32_t> &ends) {
  flatbuffers::FlatBufferBuilder b;
  auto blob =
      text.empty()
          ? 0
          : b.CreateVector(reinterpret_cast<const uint8_t *>(text.data()),
                           text.size());
  auto endOffsets = b.CreateVector(ends);
  auto tok = fb::CreateTokenizerData(b, 0, blob, endOffsets);
  fb::ManifestBuilder mb(b);
  mb.add_tokenizer(tok);
  return finish(b, mb.Finish());
}

TEST(ManifestHostileTest, RefusesVocabEndsOutsideTheText) {
  Manifest got;
  std::vector<uint8_t> good = vocabManifest("abcde", {1, 1, 5});
  ASSERT_TRUE(decodeManifest(good.data(), good.size(), &got));
  EXPECT_EQ(got.tokenizer.vocab, (std::vector<std::string>{"a", "", "bcde"}));
  EXPECT_EQ(decodeError(vocabManifest("abcde", {3, 2, 5})),
            "malformed manifest at tokenizer: vocab_ends[1] = 2 (expected 3 "
            "to 5)");
  EXPECT_EQ(decodeError(vocabManifest("abcde", {1, 6})),
            "malformed manifest at tokenizer: vocab_ends[1] = 6 (expected 1 "
            "to 5)");
  EXPECT_EQ(decodeError(vocabManifest("abcde", {1, 4})),
            "malformed manifest at tokenizer: vocab_text holds 1 bytes past "
            "the last token");
  // Only empty tokens: the writer omits vocab_text altogether.
  const std::vector<uint8_t> emptyTokens = vocabManifest("", {0, 0});
  ASSERT_TRUE(decodeManifest(emptyTokens.data(), emptyTokens.size(), &got));
  EXPECT_EQ(got.tokenizer.vocab, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(decodeError(vocabManifest("", {0xffffffffu})),
            "malformed manifest at tokenizer: vocab_ends[0] = 4294967295 "
            "(expected 0 to 0)");
}

TEST(ManifestHostileTest, MergesNarrowOrWideButNotBoth) {
  Manifest m;
  for (int32_t i = 0; i < 1000; ++i)
    m.tokenizer.merges.emplace_back(i * 65, 65535 - i);
  std::vector<uint8_t> bytes = encodeManifest(m);
  Manifest got;
  ASSERT_TRUE(decodeManifest(bytes.data(), bytes.size(), &got));
  EXPECT_EQ(got.tokenizer.merges, m.tokenizer.merges);
  const size_t narrowSize = bytes.size();
  m.tokenizer.merges.emplace_back(3, 65536); // one id too wide: all wide
  bytes = encodeManifest(m);
  ASSERT_TRUE(decodeManifest(bytes.data(), bytes.size(), &got));
  EXPECT_EQ(got.tokenizer.merges, m.tokenizer.merges);
  EXPECT_GT(bytes.size(), narrowSize + 3000); // ~4 more bytes per merge

  flatbuffers::FlatBufferBuilder b;
  std::vector<fb::Merge> wide = {fb::Merge(1, 2)};
  auto wideVec = b.CreateVectorOfStructs(wide);
  auto narrowVec = b.CreateVector(std::vector<uint16_t>{1, 2, 3});
  auto tok = fb::CreateTokenizerData(b, 0, 0, 0, wideVec, 0, false, -1, false,
                                     0, 0, 0, -1, -1, false, 0, narrowVec);
  fb::ManifestBuilder mb(b);
  mb.add_tokenizer(tok);
  EXPECT_EQ(decodeError(finish(b, mb.Finish())),
            "malformed manifest at tokenizer: both merges and merges_u16 are "
            "present");
  flatbuffers::FlatBufferBuilder c;
  narrowVec = c.CreateVector(std::vector<uint16_t>{1, 2, 3});
  tok = fb::CreateTokenizerData(c, 0, 0, 0, 0, 0, false, -1, false, 0, 0, 0, -1,
                                -1, false, 0, narrowVec);
  fb::ManifestBuilder mc(c);
  mc.add_tokenizer(tok);
  EXPECT_EQ(decodeError(finish(c, mc.Finish())),
            "malformed manifest at tokenizer: merges_u16 holds an odd number "
            "of ids (3)");
}

TEST(ManifestHostileTest, RefusesATableReferencedOverAndOver) {
  // One step of 16 attributes, listed 20000 times: 340000 tables to verify
  // in about 80 KiB, more than one per 4 bytes.
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Attr>> attrs;
  for (int i = 0; i < 16; ++i)
    attrs.push_back(fb::CreateAttr(b));
  auto step = fb::CreateStep(b, 0, 0, 0, b.CreateVector(attrs));
  std::vector<flatbuffers::Offset<fb::Step>> refs(20000, step);
  auto steps = b.CreateVector(refs);
  fb::ManifestBuilder mb(b);
  mb.add_steps(steps);
  EXPECT_EQ(decodeError(finish(b, mb.Finish())), kInvalid);
}

TEST(ManifestHostileTest, RefusesWhatTheVerifierRefuses) {
  std::vector<uint8_t> good = encodeManifest(sampleManifest());
  std::vector<uint8_t> bytes = good;
  bytes[4] = 'X'; // the file identifier "IGMF"
  EXPECT_EQ(decodeError(bytes), kInvalid);
  bytes = good;
  bytes[3] = 0x7f; // the root offset points past the end
  EXPECT_EQ(decodeError(bytes), kInvalid);
  EXPECT_EQ(decodeError({}), kInvalid);
  Manifest got;
  EXPECT_EQ(decodeManifest(nullptr, 0, &got).message(), kInvalid);
  // A string whose length runs past the end of the buffer.
  flatbuffers::FlatBufferBuilder b;
  auto name = b.CreateString("tiny");
  fb::ManifestBuilder mb(b);
  mb.add_model_name(name);
  bytes = finish(b, mb.Finish());
  const std::string tiny = "tiny";
  auto at = std::search(bytes.begin(), bytes.end(), tiny.begin(), tiny.end());
  ASSERT_NE(at, bytes.end());
  at[-1] = 0x7f; // high byte of the little-endian length
  EXPECT_EQ(decodeError(bytes), kInvalid);
}

TEST(ManifestHostileTest, RefusesAnOversizedManifestBeforeReadingIt) {
  const uint8_t byte = 0;
  Manifest got;
  Status st = decodeManifest(&byte, fb::kMaxManifestBytes + 1, &got);
  EXPECT_EQ(st.message(), "manifest: 1073741825 bytes is more than the "
                          "1073741824 this runtime reads");
}

TEST(ManifestHostileTest, AcceptsMisalignedInput) {
  const Manifest m = sampleManifest();
  const std::vector<uint8_t> good = encodeManifest(m);
  std::vector<uint8_t> shifted(good.size() + 3);
  std::copy(good.begin(), good.end(), shifted.begin() + 3);
  Manifest got;
  Status st = decodeManifest(shifted.data() + 3, good.size(), &got);
  ASSERT_TRUE(st) << st.message();
  expectSameManifest(m, got);
}

TEST(ManifestHostileTest, IgnoresFieldsOfALaterSchema) {
  // Slot 38 is the field after `external_weights`, the last of table
  // Manifest.
  flatbuffers::FlatBufferBuilder b;
  auto name = b.CreateString("later");
  fb::ManifestBuilder mb(b);
  mb.add_model_name(name);
  b.AddElement<uint64_t>(38, 12345);
  Manifest got;
  std::vector<uint8_t> bytes = finish(b, mb.Finish());
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  ASSERT_TRUE(st) << st.message();
  Manifest want;
  want.modelName = "later";
  expectSameManifest(want, got);
}

} // namespace
