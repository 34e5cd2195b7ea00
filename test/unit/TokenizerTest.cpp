//===- TokenizerTest.cpp - Byte-level BPE pieces and the Tokenizer API ----===//
//
// The exhaustive comparison with Hugging Face `tokenizers` is
// test/e2e/test_tokenizer.py; these pin down each piece on small inputs. The
// expected pre-tokenizer pieces were produced by `tokenizers` 0.23.
//
//===----------------------------------------------------------------------===//
#include "ingot/Tokenizer.h"
#include "tokenizer/ByteLevel.h"
#include "tokenizer/PreTokenizer.h"
#include "tokenizer/Unicode.h"

#include <gtest/gtest.h>
#include <random>

using namespace ingot;
using namespace ingot::tok;

namespace {

std::string byteLevel(std::string_view s) {
  std::string out;
  appendByteLevel(s, out);
  return out;
}

TEST(ByteLevelTest, MapsBytesToGpt2Alphabet) {
  EXPECT_EQ(byteToChar('!'), uint32_t('!'));
  EXPECT_EQ(byteToChar(' '), 0x120u);  // 'Ġ'
  EXPECT_EQ(byteToChar('\n'), 0x10au); // 'Ċ'
  EXPECT_EQ(byteToChar(0x00), 0x100u);
  EXPECT_EQ(byteToChar(0x7f), 0x121u);
  EXPECT_EQ(byteToChar(0xa0), 0x142u);
  EXPECT_EQ(byteToChar(0xad), 0x143u);
  EXPECT_EQ(byteToChar(0xe9), 0xe9u); // 'é' stands for byte 0xe9 itself
  std::string all;
  for (int b = 0; b < 256; ++b)
    all += char(b);
  EXPECT_EQ(byteLevelToBytes(byteLevel(all)), all);
  EXPECT_EQ(byteLevel(" é"), "\xc4\xa0\xc3\x83\xc2\xa9"); // "ĠÃ©"
}

TEST(ByteLevelTest, TokensOutsideTheAlphabetDecodeAsThemselves) {
  EXPECT_EQ(byteLevelToBytes("<|im_start|>"), "<|im_start|>");
  EXPECT_EQ(byteLevelToBytes("<x y>"), "<x y>"); // ' ' is not in it
  EXPECT_EQ(byteLevelToBytes("日本"), "日本");
  EXPECT_EQ(byteLevelToBytes("é"), "\xe9"); // is in it: one raw byte
  EXPECT_EQ(byteLevelToBytes("\xc4\xa0zz"), " zz");
}

TEST(UnicodeTest, Classes) {
  EXPECT_TRUE(isLetter('a') && isLetter(0x4e00) && isLetter(0x1c89));
  EXPECT_FALSE(isLetter('1') || isLetter(0x301) || isLetter(0x1f600));
  EXPECT_TRUE(isNumber('7') && isNumber(0x663) && isNumber(0xbd) &&
              isNumber(0x2160));
  EXPECT_FALSE(isNumber('a') || isNumber(0x10ffff));
  for (uint32_t c : {0x09u, 0x0au, 0x0du, 0x20u, 0x85u, 0xa0u, 0x1680u, 0x2000u,
                     0x2028u, 0x2029u, 0x202fu, 0x3000u})
    EXPECT_TRUE(isWhiteSpace(c)) << c;
  for (uint32_t c : {0x08u, 0x1cu, 0x1fu, 0x200bu, 0xfeffu, 0x180eu})
    EXPECT_FALSE(isWhiteSpace(c)) << c;
}

TEST(UnicodeTest, LossyUtf8LikeRust) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(toValidUtf8("ok é 日 😀"), "ok é 日 😀");
  EXPECT_EQ(toValidUtf8("\xe6\x97"), fffd);        // cut 3-byte char
  EXPECT_EQ(toValidUtf8("\xf0\x9f\x98"), fffd);    // cut 4-byte char
  EXPECT_EQ(toValidUtf8("\xc3\xc3"), fffd + fffd); // two lead bytes
  EXPECT_EQ(toValidUtf8("a\x80"
                        "b"),
            "a" + fffd + "b"); // stray continuation
  EXPECT_EQ(toValidUtf8("\xed\xa0\x80"), fffd + fffd + fffd); // surrogate
  EXPECT_EQ(toValidUtf8("\xc0\xaf"), fffd + fffd);            // overlong
  EXPECT_EQ(toValidUtf8("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);
}

TEST(UnicodeTest, Nfc) {
  EXPECT_EQ(toNfc("e\xcc\x81"), "\xc3\xa9");                      // e + acute
  EXPECT_EQ(toNfc("\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8"), "각"); // L V T
  EXPECT_EQ(toNfc("\xe2\x84\xab"), "\xc3\x85"); // Angstrom sign
  // d + dot above + dot below reorders and composes with the dot below.
  EXPECT_EQ(toNfc("d\xcc\x87\xcc\xa3"), "\xe1\xb8\x8d\xcc\x87");
  EXPECT_EQ(toNfc("\xcd\x81x"), "\xcc\x81x"); // U+0341 -> U+0301
  EXPECT_EQ(toNfc("plain ascii"), "plain ascii");
  EXPECT_EQ(toNfc("a\xff\xcc\x81"), "a\xff\xcc\x81"); // invalid byte blocks
}

struct SplitCase {
  SplitPattern pattern;
  std::string text;
  std::vector<std::string> pieces;
};

TEST(PreTokenizerTest, MatchesTokenizersOnTrickyText) {
  const SplitCase cases[] = {
      {SplitPattern::Gpt2,
       "Hello world's  end \x0a\x0a  x",
       {"Hello", " world", "'s", " ", " end", " \x0a\x0a ", " x"}},
      {SplitPattern::Gpt2,
       "I'M 'Ll '\xc5\xbft ab'RE 12345 x\xc2\xb2\xc2\xbd",
       {"I", "'", "M", " '", "Ll", " '", "\xc5\xbft", " ab", "'", "RE",
        " 12345", " x", "\xc2\xb2\xc2\xbd"}},
      {SplitPattern::Gpt2,
       "  \x09\x0a\x0d\x0a  foo!!\x0a\x0a"
       "bar\xe3\x80\x80"
       "baz \xc2\xa0 ",
       {"  \x09\x0a\x0d\x0a ", " foo", "!!", "\x0a", "\x0a", "bar",
        "\xe3\x80\x80", "baz", " \xc2\xa0 "}},
      {SplitPattern::Gpt2,
       "\x22\x22quoted\x22 (a)...?!\x0a",
       {"\x22\x22", "quoted", "\x22", " (", "a", ")...?!", "\x0a"}},
      {SplitPattern::Gpt2,
       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e "
       "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
       "\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4",
       {"caf\xc3\xa9", " \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        " \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",
        " \xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4"}},
      {SplitPattern::Llama3,
       "Hello world's  end \x0a\x0a  x",
       {"Hello", " world", "'s", " ", " end", " \x0a\x0a", " ", " x"}},
      {SplitPattern::Llama3,
       "I'M 'Ll '\xc5\xbft ab'RE 12345 x\xc2\xb2\xc2\xbd",
       {"I", "'M", " '", "Ll", " '", "\xc5\xbft", " ab", "'RE", " ", "123",
        "45", " x", "\xc2\xb2\xc2\xbd"}},
      {SplitPattern::Llama3,
       "  \x09\x0a\x0d\x0a  foo!!\x0a\x0a"
       "bar\xe3\x80\x80"
       "baz \xc2\xa0 ",
       {"  \x09\x0a\x0d\x0a", " ", " foo", "!!\x0a\x0a", "bar",
        "\xe3\x80\x80"
        "baz",
        " \xc2\xa0 "}},
      {SplitPattern::Llama3,
       "\x22\x22quoted\x22 (a)...?!\x0a",
       {"\x22\x22", "quoted", "\x22", " (", "a", ")...?!\x0a"}},
      {SplitPattern::Llama3,
       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e "
       "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
       "\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4",
       {"caf\xc3\xa9", " \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        " \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", " ",
        "\xd9\xa1\xd9\xa2\xd9\xa3", "\xd9\xa4"}},
      {SplitPattern::Qwen2,
       "Hello world's  end \x0a\x0a  x",
       {"Hello", " world", "'s", " ", " end", " \x0a\x0a", " ", " x"}},
      {SplitPattern::Qwen2,
       "I'M 'Ll '\xc5\xbft ab'RE 12345 x\xc2\xb2\xc2\xbd",
       {"I", "'M", " '", "Ll", " '", "\xc5\xbft", " ab", "'RE", " ", "1", "2",
        "3", "4", "5", " x", "\xc2\xb2", "\xc2\xbd"}},
      {SplitPattern::Qwen2,
       "  \x09\x0a\x0d\x0a  foo!!\x0a\x0a"
       "bar\xe3\x80\x80"
       "baz \xc2\xa0 ",
       {"  \x09\x0a\x0d\x0a", " ", " foo", "!!\x0a\x0a", "bar",
        "\xe3\x80\x80"
        "baz",
        " \xc2\xa0 "}},
      {SplitPattern::Qwen2,
       "\x22\x22quoted\x22 (a)...?!\x0a",
       {"\x22\x22", "quoted", "\x22", " (", "a", ")...?!\x0a"}},
      {SplitPattern::Qwen2,
       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e "
       "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
       "\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4",
       {"caf\xc3\xa9", " \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        " \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", " ", "\xd9\xa1",
        "\xd9\xa2", "\xd9\xa3", "\xd9\xa4"}},
      {SplitPattern::Gpt2Digits,
       "Hello world's  end \x0a\x0a  x",
       {"Hello", " world", "'s", " ", " end", " \x0a\x0a ", " x"}},
      {SplitPattern::Gpt2Digits,
       "I'M 'Ll '\xc5\xbft ab'RE 12345 x\xc2\xb2\xc2\xbd",
       {"I", "'", "M", " '", "Ll", " '", "\xc5\xbft", " ab", "'", "RE", " ",
        "1", "2", "3", "4", "5", " x", "\xc2\xb2", "\xc2\xbd"}},
      {SplitPattern::Gpt2Digits,
       "  \x09\x0a\x0d\x0a  foo!!\x0a\x0a"
       "bar\xe3\x80\x80"
       "baz \xc2\xa0 ",
       {"  \x09\x0a\x0d\x0a ", " foo", "!!", "\x0a", "\x0a", "bar",
        "\xe3\x80\x80", "baz", " \xc2\xa0 "}},
      {SplitPattern::Gpt2Digits,
       "\x22\x22quoted\x22 (a)...?!\x0a",
       {"\x22\x22", "quoted", "\x22", " (", "a", ")...?!", "\x0a"}},
      {SplitPattern::Gpt2Digits,
       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e "
       "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
       "\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4",
       {"caf\xc3\xa9", " \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        " \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", " ", "\xd9\xa1",
        "\xd9\xa2", "\xd9\xa3", "\xd9\xa4"}},
  };
  for (const SplitCase &c : cases) {
    std::vector<std::string_view> got;
    preTokenize(c.text, c.pattern, &got);
    EXPECT_EQ(std::vector<std::string>(got.begin(), got.end()), c.pieces)
        << "pattern " << int(c.pattern) << " on '" << c.text << "'";
  }
}

TEST(PreTokenizerTest, ParsesOptions) {
  TokenizerOptions o;
  std::string error;
  ASSERT_TRUE(parseTokenizerOptions("qwen2+nfc+ignore_merges", &o, &error));
  EXPECT_EQ(o.pattern, SplitPattern::Qwen2);
  EXPECT_TRUE(o.nfc && o.ignoreMerges);
  EXPECT_EQ(formatTokenizerOptions(o), "qwen2+nfc+ignore_merges");
  EXPECT_FALSE(parseTokenizerOptions("bert", &o, &error));
  EXPECT_NE(error.find("unknown pre-tokenizer 'bert'"), std::string::npos);
  EXPECT_FALSE(parseTokenizerOptions("gpt2+nfc+nfc", &o, &error));
  EXPECT_FALSE(parseTokenizerOptions("gpt2+", &o, &error));
}

//===--- The Tokenizer on a hand-built vocabulary
//---------------------------===//

// Ids: 0 a, 1 b, 2 c, 3 Ġ, 4 ab, 5 bc, 6 abc, 7 Ġa, 8 aa, 9 Ġab (no merge
// makes it), 10 "" (added <s>), 11 "" (added <s>x), 12 "" (unused).
TokenizerData tinyData() {
  TokenizerData d;
  d.vocab = {"a",
             "b",
             "c",
             "\xc4\xa0",
             "ab",
             "bc",
             "abc",
             "\xc4\xa0"
             "a",
             "aa",
             "\xc4\xa0"
             "ab",
             "",
             "",
             ""};
  d.merges = {{1, 2}, {0, 1}, {0, 5}, {3, 0}, {0, 0}};
  d.addedTokens = {{10, "<s>", true}, {11, "<s>x", false}};
  d.bosId = 10;
  d.eosId = 11;
  return d;
}

std::unique_ptr<Tokenizer> make(const TokenizerData &d) {
  std::unique_ptr<Tokenizer> t;
  Status s = Tokenizer::create(d, &t);
  EXPECT_TRUE(s) << s.message();
  return t;
}

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

//===--- Chat templates
//-----------------------------------------------------===//

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

TEST(ChatTemplateTest, NoTemplateIsAnError) {
  auto t = make(tinyData());
  std::string out;
  Status s = t->applyChatTemplate({{"user", "hi"}}, true, &out);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("no chat template"), std::string::npos);
}

} // namespace
