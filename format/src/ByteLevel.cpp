//===- ByteLevel.cpp - GPT-2's byte <-> printable character map -----------===//
#include "ingot/ByteLevel.h"

#include "ingot/Utf8.h"

#include <array>

namespace ingot::tok {
namespace {

bool printable(unsigned b) {
  return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
}

struct Tables {
  std::array<uint32_t, 256> toChar{};
  std::array<int16_t, 0x144> toByte{}; // code points below U+0144; -1 if none
  std::array<std::string, 256> utf8;   // toChar as UTF-8, for encoding
  Tables() {
    toByte.fill(-1);
    uint32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      toChar[b] = printable(b) ? b : next++;
      toByte[toChar[b]] = int16_t(b);
      appendUtf8(utf8[b], toChar[b]);
    }
  }
};

const Tables &tables() {
  static const Tables t;
  return t;
}

} // namespace

uint32_t byteToChar(uint8_t b) { return tables().toChar[b]; }

void appendByteLevel(std::string_view bytes, std::string &out) {
  const Tables &t = tables();
  for (char c : bytes)
    out += t.utf8[uint8_t(c)];
}

std::string byteLevelToBytes(std::string_view token) {
  const Tables &t = tables();
  std::string out;
  for (size_t pos = 0; pos < token.size();) {
    uint32_t cp = nextChar(token, &pos);
    if (cp >= t.toByte.size() || t.toByte[cp] < 0)
      return std::string(token);
    out += char(t.toByte[cp]);
  }
  return out;
}

} // namespace ingot::tok
