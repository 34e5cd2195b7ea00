//===- TokenizerTest.cpp - The Tokenizer API and chat templates -----------===//
//
// Encoding, decoding and chat templates on the hand-built vocabulary of
// TokenizerTestUtil.h, where every merge can be worked out by hand. The
// exhaustive comparison with Hugging Face `tokenizers` is
// test/e2e/test_tokenizer.py; the byte alphabet, Unicode classes and
// pre-tokenizer are in TokenizerPiecesTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "TokenizerTestUtil.h"

#include "ingot/Tokenizer.h"

#include <gtest/gtest.h>
#include <random>

using namespace ingot;
using namespace ingot::test;

namespace {

using Ids = std::vector<int32_t>;

TEST(TokenizerTest, MergesByRankLeftmostFirst) {
  auto t = make(tinyData());
  EXPECT_EQ(t->encode("abc", false), (Ids{6})); // bc (rank 0), then a+bc
  EXPECT_EQ(t->encode("aaa", false), (Ids{8, 0}));
  EXPECT_EQ(t->encode(" abc", false), (Ids{3, 6})); // Ġa loses to bc, ab
  EXPECT_EQ(t->encode("ab", false), (Ids{4}));
  EXPECT_EQ(t->encode("adb", false), (Ids{4})); // 'd' has no token: dropped
  EXPECT_EQ(t->encode(" ab", false), (Ids{3, 4}));
  EXPECT_EQ(t->encode("", false), Ids{});
  EXPECT_EQ(t->encode("", true), (Ids{10}));
}

TEST(TokenizerTest, IgnoreMergesTakesWholeWords) {
  TokenizerData d = tinyData();
  d.pretokenizer = "gpt2+ignore_merges";
  auto t = make(d);
  EXPECT_EQ(t->encode(" ab", false), (Ids{9}));
  EXPECT_EQ(t->encode(" abc", false), (Ids{3, 6}));
}

TEST(TokenizerTest, AddedTokensSplitFirstLongestAtLeftmost) {
  auto t = make(tinyData());
  EXPECT_EQ(t->encode("a<s>xb<s>", false), (Ids{0, 11, 1, 10}));
  EXPECT_EQ(t->encode("<s><s>", true), (Ids{10, 10, 10}));
  EXPECT_EQ(t->encode("ab<s", false), (Ids{4})); // '<', 's' have no token
  // Text on each side is pre-tokenized on its own: " a" stays " a".
  EXPECT_EQ(t->encode("a<s> a", false), (Ids{0, 10, 7}));
}

TEST(TokenizerTest, Decodes) {
  auto t = make(tinyData());
  EXPECT_EQ(t->decode({7, 5, 10, 11, 3}), " abc<s><s>x ");
  EXPECT_EQ(t->decode({12, -1, 99, 1 << 30, 0}), "a");
  EXPECT_EQ(t->tokenBytes(3), " ");
  EXPECT_EQ(t->tokenBytes(12), "");
  EXPECT_EQ(t->tokenBytes(-3), "");
  EXPECT_EQ(t->vocabSize(), 13);
  EXPECT_EQ(t->bosId(), 10);
  EXPECT_EQ(t->eosId(), 11);
  EXPECT_FALSE(t->addBos());
}

TEST(TokenizerTest, RejectsBrokenData) {
  auto error = [](TokenizerData d) {
    std::unique_ptr<Tokenizer> t;
    Status s = Tokenizer::create(d, &t);
    EXPECT_FALSE(s);
    return s.message();
  };
  TokenizerData d = tinyData();
  d.merges.push_back({1, 0}); // "ba" is not in the vocab
  EXPECT_NE(error(d).find("merge 5: the merged token is not in the vocab"),
            std::string::npos);
  d = tinyData();
  d.merges.push_back({12, 0});
  EXPECT_NE(error(d).find("not in the vocabulary"), std::string::npos);
  d = tinyData();
  d.pretokenizer = "llama2";
  EXPECT_NE(error(d).find("unknown pre-tokenizer"), std::string::npos);
  d = tinyData();
  d.bosId = 13;
  EXPECT_NE(error(d).find("BOS/EOS id 13"), std::string::npos);
  d = tinyData();
  d.addedTokens.push_back({40, "<x>", true});
  EXPECT_NE(error(d).find("added token 40"), std::string::npos);
  d = tinyData();
  d.chatTemplate = "zephyr";
  EXPECT_NE(error(d).find("unknown chat template"), std::string::npos);
}

TEST(TokenizerTest, AnyBytesRoundTripWithAFullByteAlphabet) {
  // Invalid UTF-8 cannot come from `tokenizers` (it takes str), but the
  // runtime must cope: every byte still becomes its byte token.
  TokenizerData d;
  for (int b = 0; b < 256; ++b)
    d.vocab.push_back(byteLevel(std::string(1, char(b))));
  d.vocab.push_back(byteLevel("\xe6\x97"));
  d.merges = {{0xe6, 0x97}};
  d.addedTokens = {{257, "<\xff>", true}};
  d.vocab.push_back("");
  const std::string chars("a 1\n'\xe6\x97\xa5\xff\xc3<>\0", 13);
  std::mt19937 rng(3);
  for (const char *p : {"gpt2", "llama3", "qwen2", "gpt2-digits"}) {
    d.pretokenizer = p;
    auto t = make(d);
    for (int iter = 0; iter < 300; ++iter) {
      std::string text(rng() % 64, '\0');
      for (char &c : text)
        c = chars[rng() % chars.size()];
      EXPECT_EQ(t->decode(t->encode(text, false)), text) << p;
    }
  }
}

//===--- Chat templates ---------------------------------------------------===//

std::string chat(const std::string &tmpl, std::vector<ChatMessage> messages,
                 bool generationPrompt = true) {
  TokenizerData d = tinyData();
  d.chatTemplate = tmpl;
  d.addedTokens.push_back({12, "<|begin_of_text|>", true});
  d.bosId = 12;
  auto t = make(d);
  std::string out;
  Status s = t->applyChatTemplate(messages, generationPrompt, &out);
  EXPECT_TRUE(s) << s.message();
  return out;
}

TEST(ChatTemplateTest, ChatMl) {
  EXPECT_EQ(chat("chatml", {{"user", "Hi!"}}),
            "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(chat("chatml", {{"system", "S"}, {"user", "U"}}, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n");
}

TEST(ChatTemplateTest, ChatMlWithDefaultSystemMessage) {
  // SmolLM2-Instruct's template, rendered by Jinja for a user-only chat.
  const std::string smol =
      "chatml:You are a helpful AI assistant named SmolLM, trained by "
      "Hugging Face";
  EXPECT_EQ(chat(smol, {{"user", "What is 2+2?"}}),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
            "trained by Hugging Face<|im_end|>\n<|im_start|>user\nWhat is "
            "2+2?<|im_end|>\n<|im_start|>assistant\n");
  // A system message of one's own replaces it; none at all gets nothing.
  EXPECT_EQ(chat(smol, {{"system", "Be brief."}, {"user", "Hi"}}),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi"
            "<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(chat(smol, {}), "<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, Llama3TrimsContentAndStartsWithBos) {
  EXPECT_EQ(chat("llama3", {{"system", " Be brief.\n"}, {"user", "\tHi \x1f"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "Hi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(chat("llama3", {}, false), "");
}

TEST(ChatTemplateTest, GemmaTurnsAlternateAndFoldTheSystemMessage) {
  // Rendered by hand from Gemma 3's Jinja template: BOS, turns named user
  // and model with trimmed content, the system text (untrimmed) and a blank
  // line ahead of the first user content.
  EXPECT_EQ(chat("gemma", {{"system", "Be brief. "},
                           {"user", " Hi\n"},
                           {"assistant", "Hello!"},
                           {"user", "Bye"}}),
            "<|begin_of_text|><start_of_turn>user\nBe brief. \n\nHi"
            "<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
            "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(chat("gemma-nosystem", {{"user", "Hi"}}, false),
            "<|begin_of_text|><start_of_turn>user\nHi<end_of_turn>\n");
  TokenizerData d = tinyData();
  std::string out;
  for (auto [tmpl, msgs] :
       {std::pair<std::string, std::vector<ChatMessage>>{
            "gemma-nosystem", {{"system", "S"}, {"user", "U"}}},
        {"gemma", {{"user", "U"}, {"user", "again"}}},
        {"gemma", {{"assistant", "A"}}}}) {
    d.chatTemplate = tmpl;
    Status s = make(d)->applyChatTemplate(msgs, true, &out);
    EXPECT_FALSE(s) << tmpl;
  }
}

TEST(ChatTemplateTest, MistralWrapsUserTurnsInInst) {
  TokenizerData d = tinyData();
  d.chatTemplate = "mistral";
  d.addedTokens.push_back({12, "</s>", true});
  d.bosId = 10, d.eosId = 12; // tinyData's 10 is "<s>"
  std::string out;
  ASSERT_TRUE(make(d)->applyChatTemplate(
      {{"user", "Hi"}, {"assistant", "Hello"}, {"user", "Bye"}}, true, &out));
  EXPECT_EQ(out, "<s>[INST] Hi [/INST]Hello</s>[INST] Bye [/INST]");
  EXPECT_FALSE(make(d)->applyChatTemplate({{"system", "S"}, {"user", "U"}},
                                          true, &out));
}

TEST(ChatTemplateTest, NoTemplateIsAnError) {
  auto t = make(tinyData());
  std::string out;
  Status s = t->applyChatTemplate({{"user", "hi"}}, true, &out);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("no chat template"), std::string::npos);
}

} // namespace
