//===- Unicode.h - Character classes, UTF-8 and NFC for tokenizing -*- C++ -*-//
//
// Text handed to the tokenizer is bytes that are normally UTF-8. Hugging Face
// `tokenizers` only ever sees valid UTF-8 (a Rust String), so for invalid
// input there is nothing to match; ingot's convention is that each byte that
// is not part of a valid UTF-8 sequence is one "character" of its own that
// belongs to no class (like punctuation) and is kept as is, so that encoding
// never fails and, with a token for every byte and no normalizer,
// decode(encode(x)) == x for any bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Utf8.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::tok {

/// \p{L}: general category Lu, Ll, Lt, Lm or Lo.
bool isLetter(uint32_t cp);
/// \p{N}: general category Nd, Nl or No.
bool isNumber(uint32_t cp);
/// What the Digits pre-tokenizer isolates: Rust's char::is_numeric, whose
/// Unicode version can be newer than Oniguruma's \p{N}.
bool isDigitsNumeric(uint32_t cp);
/// \s: the White_Space property (what Oniguruma and the regex crate use).
bool isWhiteSpace(uint32_t cp);
/// Canonical combining class (0 for starters and unassigned code points).
uint8_t combiningClass(uint32_t cp);

/// Unicode Normalization Form C. Invalid bytes pass through unchanged and
/// act as starters that compose with nothing.
std::string toNfc(std::string_view s);

} // namespace ingot::tok
