//===- JsonWriterTest.cpp - JSON escaping and structure -------------------===//
#include "JsonWriter.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace ingot;

namespace {

std::string quoted(std::string_view s) {
  std::string out;
  json::appendQuoted(out, s);
  return out;
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(quoted("plain"), "\"plain\"");
  EXPECT_EQ(quoted("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(quoted("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(quoted(std::string_view("\x00\x01\x1f\x7f", 4)),
            "\"\\u0000\\u0001\\u001f\\u007f\"");
}

TEST(JsonWriterTest, PassesValidUtf8AndReplacesInvalid) {
  // 2-, 3- and 4-byte sequences pass through unchanged.
  EXPECT_EQ(quoted("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(quoted("\xff"), "\"\\ufffd\"");            // never valid
  EXPECT_EQ(quoted("\x80x"), "\"\\ufffdx\"");          // lone continuation
  EXPECT_EQ(quoted("\xc0\xaf"), "\"\\ufffd\\ufffd\""); // overlong '/'
  EXPECT_EQ(quoted("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); // surrogate
  EXPECT_EQ(quoted("\xf4\x90\x80\x80"), // above U+10FFFF
            "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(quoted("\xe2\x82"), "\"\\ufffd\\ufffd\"");  // truncated
  EXPECT_EQ(quoted("a\xe2\x80\xa8z"), "\"a\\u2028z\""); // JS line separator
}

TEST(JsonWriterTest, CompactStructure) {
  std::string out;
  json::Writer w(&out, /*indent=*/0);
  w.beginObject();
  w.field("n", 3);
  w.field("neg", int64_t(-4));
  w.field("big", uint64_t(18446744073709551615ull));
  w.field("f", 0.1);
  w.field("nan", std::nan(""));
  w.field("t", true);
  w.key("list");
  w.beginArray(true);
  w.value("x");
  w.null();
  w.beginObject();
  w.endObject();
  w.endArray();
  w.key("empty");
  w.beginArray();
  w.endArray();
  w.endObject();
  EXPECT_EQ(out, "{\"n\":3,\"neg\":-4,\"big\":18446744073709551615,"
                 "\"f\":0.1,\"nan\":null,\"t\":true,"
                 "\"list\":[\"x\",null,{}],\"empty\":[]}");
}

TEST(JsonWriterTest, PrettyStructureKeepsInlineArraysOnOneLine) {
  std::string out;
  json::Writer w(&out);
  w.beginObject();
  w.key("shape");
  w.beginArray(true);
  w.value(2);
  w.value(3);
  w.endArray();
  w.key("items");
  w.beginArray();
  w.beginObject();
  w.field("k", "v");
  w.endObject();
  w.endArray();
  w.endObject();
  EXPECT_EQ(out, "{\n  \"shape\": [2, 3],\n  \"items\": [\n    {\n"
                 "      \"k\": \"v\"\n    }\n  ]\n}");
}

} // namespace
