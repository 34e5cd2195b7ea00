//===- BatchLineParserTest.cpp - What the CLI does with JSON --------------===//
//
// Batch and dataset lines come from users: what the strict parse refuses
// on top of nlohmann-json (nesting, duplicate keys, overflowing numbers),
// that its errors name the column and never echo the bytes refused, and the
// batch line's refusals naming the key and the type expected. Writing:
// non-finite figures are null and invalid UTF-8 becomes U+FFFD.
//
//===----------------------------------------------------------------------===//
#include "BatchLineParser.h"
#include "JsonText.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

using namespace ingot;
using namespace ingot::cli;

namespace {

std::string parseError(std::string_view text) {
  OrderedJson v;
  std::string error = parseJsonLine(text, &v);
  EXPECT_NE(error, "") << text;
  EXPECT_TRUE(v.is_null()) << text; // nothing half-parsed is left behind
  return error;
}

TEST(JsonLine, ReadsARequestLineExactly) {
  OrderedJson v;
  ASSERT_EQ(parseJsonLine(R"({"prompt": "h\u00e9", "seed": 9007199254740993,
      "top_p": 0.9, "emoji": "\ud83d\ude00", "ids": [1, -3, 2e3]})",
                          &v),
            "");
  EXPECT_EQ(v["prompt"], "h\xc3\xa9");
  EXPECT_EQ(exactInt64(v["seed"]), 9007199254740993LL); // beyond 2^53
  EXPECT_EQ(v["emoji"], "\xf0\x9f\x98\x80");
  EXPECT_EQ(exactInt64(v["ids"][1]), -3);
  EXPECT_EQ(exactInt64(v["ids"][2]), std::nullopt); // 2e3 is not written as one
  EXPECT_EQ(exactInt64(v["top_p"]), std::nullopt);
  EXPECT_EQ(v.begin().key(), "prompt"); // keys stay in the order written
}

TEST(JsonLine, RefusesWhatNlohmannWouldAccept) {
  EXPECT_EQ(parseError(R"({"seed": 1, "seed": 2})"), "duplicate key 'seed'");
  EXPECT_EQ(parseError(R"([{"a": 1}, {"b": {"a": 1, "a": 1}}])"),
            "duplicate key 'a'");
  EXPECT_NE(parseError("[1e999]").find("number overflow"), std::string::npos);
  // The same key in two objects is fine.
  OrderedJson v;
  EXPECT_EQ(parseJsonLine(R"([{"a": 1}, {"a": 2}])", &v), "");
}

TEST(JsonLine, NestingIsCappedAndAHostileLineStaysSmall) {
  EXPECT_EQ(parseError(std::string(100000, '[')), "nesting deeper than 32");
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(parseError(deep), "nesting deeper than 32");
  OrderedJson v;
  EXPECT_EQ(parseJsonLine(std::string(32, '[') + std::string(32, ']'), &v), "");
  std::string objects = "1";
  for (int i = 0; i < 33; ++i)
    objects = "{\"k\": " + objects + "}";
  EXPECT_EQ(parseError(objects), "nesting deeper than 32");
  // Keys below the cap do not confuse the duplicate check above it.
  std::string mixed = "{\"k\": " + std::string(40, '[') +
                      std::string(40, ']') + ", \"j\": 1}";
  EXPECT_EQ(parseError(mixed), "nesting deeper than 32");
}

TEST(JsonLine, SyntaxErrorsNameTheColumnAndDoNotEchoTheInput) {
  for (const char *bad :
       {"", "{", "{\"a\":1,}", "[1,]", "{a:1}", "01", "NaN", "// c\n1",
        "\"tab\there\"", "\"\\ud800\"", "{\"a\":1}x", "\"a\xff\""}) {
    std::string error = parseError(bad);
    EXPECT_EQ(error.rfind("column ", 0), 0u) << bad << " -> " << error;
    EXPECT_EQ(error.find("last read"), std::string::npos) << error;
    EXPECT_EQ(error.find('\xff'), std::string::npos) << error;
  }
  EXPECT_EQ(parseError("{\"a\": tru}"),
            "column 10: syntax error while parsing value - invalid literal");
  EXPECT_EQ(parseError("{\"prompt\": \"a\xc3\"}"),
            "column 15: invalid UTF-8 in a string");
}

TEST(JsonText, NonFiniteIsNullAndInvalidUtf8IsReplaced) {
  OrderedJson o = {{"nan", finiteOrNull(std::nan(""))},
                   {"inf", finiteOrNull(std::numeric_limits<double>::infinity())},
                   {"x", finiteOrNull(0.1)},
                   {"name", "a\xff\"b"}};
  EXPECT_EQ(jsonText(o),
            "{\"nan\":null,\"inf\":null,\"x\":0.1,\"name\":\"a\xef\xbf\xbd\\\"b\"}");
  EXPECT_EQ(jsonKindName(OrderedJson::array()), std::string("an array"));
}

/// SentencePiece with 0 <unk>, 1 <s>, 2 </s>, 3 ▁, 4 a, 5 ▁a.
const Tokenizer &tinyTokenizer() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    TokenizerData d;
    d.model = "sentencepiece_bpe";
    d.vocab = {"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a",
               "\xe2\x96\x81" "a"};
    d.merges = {{3, 4}};
    d.addedTokens = {{1, "<s>", true}, {2, "</s>", true}};
    d.unkId = 0;
    d.bosId = 1, d.eosId = 2;
    d.pretokenizer = "metaspace+prepend";
    d.decoder = "metaspace+strip_space";
    std::unique_ptr<Tokenizer> t;
    Status s = Tokenizer::create(d, &t);
    EXPECT_TRUE(s.isOk()) << s.message();
    return t;
  }();
  return *tokenizer;
}

/// parseBatchLine on `text`; "" or its error.
std::string batchLine(const std::string &text, RequestParams *r = nullptr) {
  OrderedJson v;
  if (std::string error = parseJsonLine(text, &v); !error.empty())
    return "invalid JSON: " + error;
  RequestParams scratch;
  return parseBatchLine(v, GenerateArgs(), GenerationDefaults(),
                        tinyTokenizer(), /*vocab=*/100, r ? r : &scratch);
}

TEST(BatchLine, ReadsTheKeys) {
  RequestParams r;
  ASSERT_EQ(batchLine(R"({"prompt_tokens": [5, 99], "seed": 7, "top_k": -1,
      "max_new_tokens": 3, "temperature": 0.5, "stop": "x",
      "stop_token_ids": [2], "ignore_eos": true})",
                      &r),
            "");
  EXPECT_EQ(r.promptTokens, (std::vector<int32_t>{5, 99}));
  EXPECT_EQ(r.sampling.seed, 7u);
  EXPECT_EQ(r.sampling.topK, 0); // -1 is off, as 0
  EXPECT_EQ(r.maxNewTokens, 3);
  EXPECT_DOUBLE_EQ(r.sampling.temperature, 0.5);
  EXPECT_EQ(r.stopStrings, (std::vector<std::string>{"x"}));
  EXPECT_EQ(r.stopTokenIds, (std::vector<int32_t>{2}));
  EXPECT_TRUE(r.ignoreEos);
  ASSERT_EQ(batchLine(R"({"prompt_tokens": [5], "seed": 1e3})", &r), "");
  EXPECT_EQ(r.sampling.seed, 1000u); // an integer, if not written as one
  RequestParams fromText;
  ASSERT_EQ(batchLine(R"({"prompt": "a"})", &fromText), "");
  EXPECT_FALSE(fromText.promptTokens.empty());
}

TEST(BatchLine, RefusalsNameTheKeyAndWhatWasExpected) {
  const std::pair<const char *, const char *> cases[] = {
      {"[1]", "a request must be a JSON object"},
      {R"({"prompt_tokens": [5], "temprature": 1})", "unknown key 'temprature'"},
      {R"({"prompt_tokens": [5], "prompt": "x"})",
       "give exactly one of 'prompt' and 'prompt_tokens'"},
      {R"({"prompt_tokens": []})", "the prompt is empty"},
      {R"({"prompt": 5})", "key 'prompt': expected a string"},
      {R"({"prompt_tokens": [5, 100]})",
       "key 'prompt_tokens': token 100 is outside the vocabulary [0, 100)"},
      {R"({"prompt_tokens": [5.0]})",
       "key 'prompt_tokens': expected a list of integer token ids"},
      {R"({"prompt_tokens": [18446744073709551615]})",
       "key 'prompt_tokens': expected a list of integer token ids"},
      {R"({"prompt_tokens": "5"})", "key 'prompt_tokens': expected a list of token ids"},
      {R"({"prompt_tokens": [5], "top_p": "high"})",
       "key 'top_p': expected a number, got a string"},
      {R"({"prompt_tokens": [5], "temperature": null})",
       "key 'temperature': expected a number, got null"},
      {R"({"prompt_tokens": [5], "top_p": 0})", "key 'top_p': must be in (0, 1], got 0"},
      {R"({"prompt_tokens": [5], "temperature": -1})",
       "key 'temperature': must be in [0, inf), got -1"},
      {R"({"prompt_tokens": [5], "top_k": 2.5})", "key 'top_k': expected an integer"},
      {R"({"prompt_tokens": [5], "top_k": true})", "key 'top_k': expected an integer"},
      {R"({"prompt_tokens": [5], "seed": -1})",
       "key 'seed': must be in [0, 9223372036854775807], got -1"},
      {R"({"prompt_tokens": [5], "seed": 9223372036854775808})",
       "key 'seed': must be in [0, 9223372036854775807]"},
      {R"({"prompt_tokens": [5], "seed": 1e300})",
       "key 'seed': must be in [0, 9223372036854775807]"},
      {R"({"prompt_tokens": [5], "stop": [""]})",
       "key 'stop': expected a list of non-empty strings"},
      {R"({"prompt_tokens": [5], "stop": 3})",
       "key 'stop': expected a string or a list of strings"},
      {R"({"prompt_tokens": [5], "ignore_eos": 1})",
       "key 'ignore_eos': expected true or false"},
      {R"({"prompt_tokens": [5], "seed": 1, "seed": 2})",
       "invalid JSON: duplicate key 'seed'"},
  };
  for (const auto &[line, want] : cases)
    EXPECT_EQ(batchLine(line), want) << line;
}

} // namespace
