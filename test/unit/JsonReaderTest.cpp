//===- JsonReaderTest.cpp - The CLI's strict JSON reader ------------------===//
//
// Batch files come from users: every construct outside RFC 8259 must be an
// error with a column, never a crash or a silent guess.
//
//===----------------------------------------------------------------------===//

#include "../../tools/ingot/JsonReader.h"

#include <gtest/gtest.h>

using namespace ingot::json;

namespace {

bool parses(std::string_view text, Value *v = nullptr) {
  Value scratch;
  std::string error;
  return Reader(text).parse(v ? v : &scratch, &error);
}

std::string errorOf(std::string_view text) {
  Value v;
  std::string error;
  EXPECT_FALSE(Reader(text).parse(&v, &error)) << text;
  return error;
}

TEST(JsonReader, ReadsARequestLine) {
  Value v;
  ASSERT_TRUE(parses(R"( {"prompt": "h\u00e9\n\"x\"", "prompt_tokens": [1, 2,3],
      "top_p": 0.9, "seed": 9007199254740993, "stop": ["a"], "ignore_eos": true,
      "x": null, "neg": -1.5e2, "emoji": "\ud83d\ude00"} )",
                     &v));
  ASSERT_EQ(v.kind, Value::Kind::Object);
  EXPECT_EQ(v.find("prompt")->string, "h\xc3\xa9\n\"x\"");
  ASSERT_EQ(v.find("prompt_tokens")->items.size(), 3u);
  EXPECT_EQ(v.find("prompt_tokens")->items[2].integer, 3);
  EXPECT_DOUBLE_EQ(v.find("top_p")->number, 0.9);
  EXPECT_FALSE(v.find("top_p")->isInteger);
  EXPECT_TRUE(v.find("seed")->isInteger); // exact beyond 2^53
  EXPECT_EQ(v.find("seed")->integer, 9007199254740993LL);
  EXPECT_TRUE(v.find("ignore_eos")->boolean);
  EXPECT_EQ(v.find("x")->kind, Value::Kind::Null);
  EXPECT_DOUBLE_EQ(v.find("neg")->number, -150.0);
  EXPECT_EQ(v.find("emoji")->string, "\xf0\x9f\x98\x80");
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonReader, RejectsEverythingOutsideTheGrammar) {
  for (const char *bad : {"",
                          "{",
                          "{\"a\":1,}",
                          "[1,]",
                          "[1 2]",
                          "{\"a\" 1}",
                          "{a:1}",
                          "01",
                          "1.",
                          ".5",
                          "-",
                          "1e",
                          "+1",
                          "NaN",
                          "Infinity",
                          "tru",
                          "nul",
                          "\"unterminated",
                          "\"tab\there\"",
                          "\"\\x\"",
                          "\"\\u12\"",
                          "\"\\ud800\"",
                          "\"\\udc00\"",
                          "\"\xff\"",
                          "\"\xc0\xaf\"",
                          "\"\xed\xa0\x80\"",
                          "{\"a\":1,\"a\":2}",
                          "1 2",
                          "// c\n1",
                          "1e999",
                          "{\"a\":1}x"})
    EXPECT_FALSE(parses(bad)) << bad;
}

TEST(JsonReader, ErrorsNameTheColumn) {
  EXPECT_EQ(errorOf("{\"a\": tru}"), "column 7: invalid literal");
  EXPECT_EQ(errorOf("{\"a\": 1, \"a\": 2}"), "column 13: duplicate key 'a'");
  EXPECT_EQ(errorOf("[1,]"), "column 4: expected a value");
}

TEST(JsonReader, DepthIsLimited) {
  std::string deep(100000, '[');
  EXPECT_NE(errorOf(deep).find("nesting deeper than"), std::string::npos);
  std::string ok = std::string(32, '[') + std::string(32, ']');
  EXPECT_TRUE(parses(ok));
  std::string over = std::string(33, '[') + std::string(33, ']');
  EXPECT_FALSE(parses(over));
}

TEST(JsonReader, IntegersOutsideInt64StayNumbers) {
  Value v;
  ASSERT_TRUE(parses("[18446744073709551616, -3, 2e3]", &v));
  EXPECT_FALSE(v.items[0].isInteger);
  EXPECT_DOUBLE_EQ(v.items[0].number, 18446744073709551616.0);
  EXPECT_TRUE(v.items[1].isInteger);
  EXPECT_EQ(v.items[1].integer, -3);
  EXPECT_FALSE(v.items[2].isInteger);
}

} // namespace
