//===- ByteLevel.h - GPT-2's byte <-> printable character map ---*- C++ -*-===//
//
// Byte-level BPE vocabularies store tokens as strings over an alphabet of 256
// printable code points, one per byte value, so that a token can hold any
// bytes (including partial UTF-8) and still be a JSON string: bytes that are
// printable Latin-1 map to themselves, the other 68 to U+0100.. in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ingot::tok {

/// The code point standing for byte b.
uint32_t byteToChar(uint8_t b);

/// Appends the byte-level form of `bytes` (each byte as its code point in
/// UTF-8) to `out`.
void appendByteLevel(std::string_view bytes, std::string &out);

/// The bytes a token string stands for, decoded the way the ByteLevel decoder
/// of `tokenizers` does it: when every character of the token is in the
/// byte-level alphabet, the bytes they map to; otherwise (e.g. an added token
/// with a space or a CJK character) the token's own UTF-8 bytes.
std::string byteLevelToBytes(std::string_view token);

} // namespace ingot::tok
