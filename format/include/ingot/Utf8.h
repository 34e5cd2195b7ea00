//===- Utf8.h - Decoding and encoding UTF-8 ---------------------*- C++ -*-===//
//
// Text reaching ingot is bytes that are normally UTF-8. The tokenizer treats
// each byte that is not part of a valid sequence as a "character" of its own
// (tokenizer/Unicode.h says why); the compiler and the tools use the same
// decoder, so they agree with the runtime on what valid text is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ingot::tok {

/// Stands for an invalid byte in decoded text; not a Unicode scalar value.
constexpr uint32_t kInvalidByte = 0x80000000u;

/// Decodes the character at s[*pos] and advances *pos past it. An invalid
/// byte decodes to kInvalidByte | byte and advances by one.
uint32_t nextChar(std::string_view s, size_t *pos);
/// Appends cp as UTF-8 (an kInvalidByte | b value appends the byte b).
void appendUtf8(std::string &out, uint32_t cp);

/// Whether `bytes` is well-formed UTF-8 (what Rust's String::from_utf8
/// accepts: no overlong forms, surrogates or values above U+10FFFF).
bool isValidUtf8(std::string_view bytes);

/// Like Rust's String::from_utf8_lossy (which `tokenizers` uses to decode):
/// each maximal ill-formed subsequence becomes one U+FFFD.
std::string toValidUtf8(std::string_view bytes);

} // namespace ingot::tok
