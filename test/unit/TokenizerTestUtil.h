//===- TokenizerTestUtil.h - Tokenizer test fixtures ------------*- C++ -*-===//
//
// The byte-level spelling of raw bytes, and a hand-built vocabulary small
// enough to work out every merge by hand.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ByteLevel.h"
#include "ingot/Tokenizer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

namespace ingot::test {

/// `s` spelled in the GPT-2 byte alphabet, as vocabularies store it.
inline std::string byteLevel(std::string_view s) {
  std::string out;
  tok::appendByteLevel(s, out);
  return out;
}

// Ids: 0 a, 1 b, 2 c, 3 Ġ, 4 ab, 5 bc, 6 abc, 7 Ġa, 8 aa, 9 Ġab (no merge
// makes it), 10 "" (added <s>), 11 "" (added <s>x), 12 "" (unused).
inline TokenizerData tinyData() {
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

inline std::unique_ptr<Tokenizer> make(const TokenizerData &d) {
  std::unique_ptr<Tokenizer> t;
  Status s = Tokenizer::create(d, &t);
  EXPECT_TRUE(s) << s.message();
  return t;
}

} // namespace ingot::test
