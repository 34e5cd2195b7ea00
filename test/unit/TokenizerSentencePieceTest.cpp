//===- TokenizerSentencePieceTest.cpp - SentencePiece-style BPE -----------===//
//
// The sentencepiece_bpe paths of the Tokenizer on a vocabulary small enough
// to work out by hand: "▁" for spaces and the prefix schemes, merging by
// rank and by score, byte fallback and the unknown token (fused or not),
// decoding of <0xXX> runs into UTF-8 and the stripped prefix space. The
// comparison with Hugging Face `tokenizers` over real text is
// test/e2e/test_tokenizer_spm.py.
//
//===----------------------------------------------------------------------===//
#include "TokenizerTestUtil.h"

#include "ingot/Artifact.h"
#include "tokenizer/SentencePiece.h"

#include <gtest/gtest.h>

using namespace ingot;
using namespace ingot::test;

namespace {

using Ids = std::vector<int32_t>;

// 0 <unk>, 1 <s>, 2 </s>, 3 ▁, 4 a, 5 b, 6 ▁a, 7 ab, 8 ▁ab, 9 <0xE6>,
// 10 <0x97>, 11 <0xA5>, 12 b▁, 13 ba, 14 <0x41> (byte A; "A" has no token).
TokenizerData spmData(const char *pretokenizer = "metaspace+prepend",
                      const char *decoder = "metaspace+byte_fallback+"
                                            "strip_space") {
  TokenizerData d;
  d.model = "sentencepiece_bpe";
  d.vocab = {"<unk>",
             "<s>",
             "</s>",
             "\xe2\x96\x81",
             "a",
             "b",
             "\xe2\x96\x81"
             "a",
             "ab",
             "\xe2\x96\x81"
             "ab",
             "<0xE6>",
             "<0x97>",
             "<0xA5>",
             "b\xe2\x96\x81",
             "ba",
             "<0x41>"};
  // ab first, then ▁a, ▁a+b, ▁+ab; b▁ best of all (rank 0). No rule
  // makes "ba".
  d.merges = {{5, 3}, {4, 5}, {3, 4}, {6, 5}, {3, 7}};
  d.addedTokens = {{1, "<s>", true}, {2, "</s>", true}};
  d.byteFallback = true;
  d.unkId = 0;
  d.fuseUnk = true;
  d.bosId = 1, d.eosId = 2;
  d.pretokenizer = pretokenizer;
  d.decoder = decoder;
  return d;
}

/// The same vocabulary merged by score: the pair making the best-scoring
/// token first, whatever rules say.
TokenizerData scoreData() {
  TokenizerData d = spmData();
  d.merges.clear();
  d.scores.assign(d.vocab.size(), 0.0f);
  d.scores[7] = -3, d.scores[6] = -2, d.scores[8] = -1, d.scores[12] = -10;
  d.scores[13] = -4;
  return d;
}

const std::string kMark = "\xe2\x96\x81";

TEST(SentencePieceTest, SpacesBecomeMarksWithAPrefixByRank) {
  auto t = make(spmData());
  EXPECT_EQ(t->encode("ab", false), (Ids{8}));       // ▁ab: ab, then ▁+ab
  EXPECT_EQ(t->encode(" a", false), (Ids{3, 6}));    // prepend: ▁▁a
  EXPECT_EQ(t->encode("ba", false), (Ids{3, 5, 4})); // no rule makes ba
  // Without a split the whole stretch is one word: b▁ (rank 0) wins.
  EXPECT_EQ(t->encode("ab b", false), (Ids{6, 12, 5}));
  EXPECT_EQ(t->encode("", true), (Ids{1}));
  EXPECT_EQ(t->encode("\n", false), (Ids{3, 0})); // no token, no byte: unk
}

TEST(SentencePieceTest, PrefixSchemesAroundAddedTokens) {
  // prepend: every stretch; first: only at the start of the text, and not
  // when it starts with a space; always: every stretch not starting with one.
  EXPECT_EQ(make(spmData())->encode("a<s>b", false), (Ids{6, 1, 3, 5}));
  EXPECT_EQ(make(spmData("metaspace+first"))->encode("a<s>b", false),
            (Ids{6, 1, 5}));
  EXPECT_EQ(make(spmData("metaspace+first"))->encode(" a", false), (Ids{6}));
  EXPECT_EQ(make(spmData("metaspace+always"))->encode("a<s>b", false),
            (Ids{6, 1, 3, 5}));
  EXPECT_EQ(make(spmData("metaspace+always"))->encode("<s> a", false),
            (Ids{1, 6}));
  EXPECT_EQ(make(spmData("metaspace"))->encode("ab", false), (Ids{7}));
}

TEST(SentencePieceTest, SplitCutsBeforeEveryMark) {
  auto t = make(spmData("metaspace+first+split"));
  EXPECT_EQ(t->encode("ab b", false), (Ids{8, 3, 5})); // ▁ab | ▁b
  EXPECT_EQ(t->encode("a  b", false), (Ids{6, 3, 3, 5}));
}

TEST(SentencePieceTest, ByteFallbackAndUnknownCharacters) {
  auto t = make(spmData());
  EXPECT_EQ(t->encode("\xe6\x97\xa5", false), (Ids{3, 9, 10, 11})); // 日
  EXPECT_EQ(t->encode("A", false), (Ids{3, 14}));
  EXPECT_EQ(t->encode("zz", false), (Ids{3, 0})); // one fused <unk>
  // tokenizers holds the unknown token back until a known character, so
  // byte-fallback characters in the run come out first.
  EXPECT_EQ(t->encode("z\xe6\x97\xa5z"
                      "a",
                      false),
            (Ids{3, 9, 10, 11, 0, 4}));
  TokenizerData d = spmData();
  d.fuseUnk = false;
  EXPECT_EQ(make(d)->encode("zz"
                            "a",
                            false),
            (Ids{3, 0, 0, 4}));
  d.byteFallback = false;
  EXPECT_EQ(make(d)->encode("\xe6\x97\xa5", false), (Ids{3, 0}));
  d.unkId = -1; // nothing to stand for it: dropped
  EXPECT_EQ(make(d)->encode("z\xe6\x97\xa5"
                            "a",
                            false),
            (Ids{6}));
}

TEST(SentencePieceTest, ScoresMergeAnyPairMakingAToken) {
  auto t = make(scoreData());
  EXPECT_EQ(t->encode("ab", false), (Ids{8}));     // ▁a (-2), then ▁ab (-1)
  EXPECT_EQ(t->encode("ba", false), (Ids{3, 13})); // no rule needed
  EXPECT_EQ(t->encode("\xe6\x97\xa5", false), (Ids{3, 9, 10, 11}));
  EXPECT_EQ(t->encode("zb", false), (Ids{3, 0, 5}));
  // Byte tokens and the unknown token are never merge results.
  TokenizerData d = scoreData();
  d.vocab.push_back("<0xE6><0x97>");
  d.scores.push_back(5);
  EXPECT_EQ(make(d)->encode("\xe6\x97\xa5", false), (Ids{3, 9, 10, 11}));
}

TEST(SentencePieceTest, DecodesMarksBytesAndTheStrippedPrefix) {
  auto t = make(spmData());
  EXPECT_EQ(t->decode({8, 3, 5}), "ab b");
  EXPECT_EQ(t->decode({3, 3, 4}), " a"); // one space stripped, not two
  EXPECT_EQ(t->decode({1, 6}), "<s> a");
  EXPECT_EQ(t->decode({9, 10, 11, 14}), "\xe6\x97\xa5"
                                        "A");
  // A run that is not valid UTF-8: one U+FFFD per byte, as ByteFallback.
  EXPECT_EQ(t->decode({9, 10, 4, 9}), "\xef\xbf\xbd\xef\xbf\xbd"
                                      "a\xef\xbf\xbd");
  EXPECT_EQ(t->decode({-1, 99, 6}), "a");
  EXPECT_EQ(t->tokenBytes(6), " a"); // streaming: nothing stripped
  EXPECT_EQ(t->tokenBytes(9), "\xe6");
  EXPECT_EQ(t->tokenBytes(15), "");
  EXPECT_EQ(t->vocabSize(), 15);
}

TEST(SentencePieceTest, MetaspaceDecoderDropsMarksOfTheFirstToken) {
  auto t = make(spmData("metaspace+first", "metaspace+strip_first_token"));
  EXPECT_EQ(t->decode({3, 3, 6}), "  a"); // the first ▁ only is dropped
  EXPECT_EQ(t->decode({12, 6}), "b a");   // b▁ first: its ▁ goes
  EXPECT_EQ(t->decode({9, 10}), "<0xE6><0x97>"); // no byte fallback
  auto plain = make(spmData("metaspace", "metaspace"));
  EXPECT_EQ(plain->decode({3, 6}), "  a");
}

TEST(SentencePieceTest, ByteTokenNames) {
  EXPECT_EQ(tok::byteTokenValue("<0xE6>"), 0xe6);
  EXPECT_EQ(tok::byteTokenValue("<0xe6>"), 0xe6);
  EXPECT_EQ(tok::byteTokenValue("<0x+5>"), 5); // Rust's from_str_radix
  EXPECT_EQ(tok::byteTokenValue("<0xZZ>"), -1);
  EXPECT_EQ(tok::byteTokenValue("<0xE6"), -1);
  EXPECT_EQ(tok::byteTokenName(0x0a), "<0x0A>");
}

TEST(SentencePieceTest, RejectsBrokenData) {
  auto error = [](TokenizerData d) {
    std::unique_ptr<Tokenizer> t;
    Status s = Tokenizer::create(d, &t);
    EXPECT_FALSE(s);
    return s.message();
  };
  TokenizerData d = spmData("metaspace+prepend+first");
  EXPECT_NE(error(d).find("option 'first'"), std::string::npos);
  d = spmData("gpt2");
  EXPECT_NE(error(d).find("unknown SentencePiece pre-tokenizer 'gpt2'"),
            std::string::npos);
  d = spmData("metaspace", "metaspace+strip_space+strip_first_token");
  EXPECT_NE(error(d).find("decoder option"), std::string::npos);
  d = scoreData();
  d.scores.pop_back();
  EXPECT_NE(error(d).find("14 scores for 15 tokens"), std::string::npos);
  d = spmData();
  d.unkId = 15;
  EXPECT_NE(error(d).find("unknown token 15"), std::string::npos);
  d = spmData();
  d.model = "unigram";
  EXPECT_NE(error(d).find("unknown model 'unigram'"), std::string::npos);
  d = tinyData();
  d.byteFallback = true; // byte-level models have no byte fallback
  EXPECT_NE(error(d).find("belong to sentencepiece_bpe"), std::string::npos);
}

TEST(SentencePieceTest, AnyTextRoundTripsWithAllByteTokens) {
  TokenizerData d;
  d.model = "sentencepiece_bpe";
  d.pretokenizer = "metaspace+prepend";
  d.decoder = "metaspace+byte_fallback+strip_space";
  d.byteFallback = true;
  for (int b = 0; b < 256; ++b)
    d.vocab.push_back(tok::byteTokenName(uint8_t(b)));
  d.vocab.push_back(kMark);
  d.vocab.push_back("a");
  for (const char *text : {"a b  c", "\xe6\x97\xa5\xe6\x9c\xac a",
                           "\xf0\x9f\x98\x80!", "tab\tnew\nline"}) {
    auto t = make(d);
    EXPECT_EQ(t->decode(t->encode(text, false)), text);
  }
}

TEST(SentencePieceTest, NewFieldsRoundTripAndOldArtifactsAreByteLevel) {
  Manifest m;
  m.hasLlm = true;
  m.tokenizer = scoreData();
  m.tokenizer.scores[3] = -1.5e-7f;
  std::vector<uint8_t> bytes = encodeManifest(m);
  Manifest got;
  ASSERT_TRUE(decodeManifest(bytes.data(), bytes.size(), &got));
  const TokenizerData &t = got.tokenizer;
  EXPECT_EQ(t.model, "sentencepiece_bpe");
  EXPECT_EQ(t.scores, m.tokenizer.scores);
  EXPECT_TRUE(t.byteFallback && t.fuseUnk);
  EXPECT_EQ(t.unkId, 0);
  EXPECT_EQ(t.decoder, "metaspace+byte_fallback+strip_space");
  // A tokenizer without the new fields decodes as byte-level BPE.
  Manifest old;
  old.hasLlm = true;
  old.tokenizer = tinyData();
  bytes = encodeManifest(old);
  ASSERT_TRUE(decodeManifest(bytes.data(), bytes.size(), &got));
  EXPECT_EQ(got.tokenizer.model, "byte_level_bpe");
  EXPECT_TRUE(got.tokenizer.scores.empty());
  EXPECT_EQ(got.tokenizer.unkId, -1);
}

} // namespace
