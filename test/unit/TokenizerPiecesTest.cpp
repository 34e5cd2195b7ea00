//===- TokenizerPiecesTest.cpp - Byte level, Unicode, pre-tokenizer -------===//
//
// The pieces under the Tokenizer, each on small inputs: the GPT-2 byte
// alphabet, the Unicode classes and normalisation, and the pre-tokenizer
// split patterns. The expected pre-tokenizer pieces were produced by
// `tokenizers` 0.23; the exhaustive comparison with Hugging Face
// `tokenizers` is test/e2e/test_tokenizer.py. The Tokenizer API and chat
// templates are in TokenizerTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "TokenizerTestUtil.h"

#include "ingot/ByteLevel.h"
#include "tokenizer/PreTokenizer.h"
#include "tokenizer/Unicode.h"

#include <gtest/gtest.h>

using namespace ingot;
using namespace ingot::test;
using namespace ingot::tok;

namespace {

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

} // namespace
