//===- Utf8.cpp - Decoding and encoding UTF-8 -----------------------------===//
#include "ingot/Utf8.h"

namespace ingot::tok {
namespace {

/// Scans one UTF-8 sequence at s[pos]. Returns its length and sets *cp when
/// it is valid; otherwise returns minus the length of the maximal prefix of
/// a valid sequence found there (at least 1), as the Unicode standard's
/// "maximal subpart" replacement practice (and Rust) counts them.
int scanUtf8(std::string_view s, size_t pos, uint32_t *cp) {
  uint8_t b0 = uint8_t(s[pos]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  int need;
  uint32_t c;
  uint8_t lo = 0x80, hi = 0xbf; // range of the next continuation byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    need = 1, c = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    need = 2, c = b0 & 0x0f;
    lo = b0 == 0xe0 ? 0xa0 : 0x80; // no overlong forms
    hi = b0 == 0xed ? 0x9f : 0xbf; // no surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    need = 3, c = b0 & 0x07;
    lo = b0 == 0xf0 ? 0x90 : 0x80;
    hi = b0 == 0xf4 ? 0x8f : 0xbf; // nothing above U+10FFFF
  } else {
    return -1;
  }
  for (int k = 1; k <= need; ++k) {
    if (pos + k >= s.size())
      return -k;
    uint8_t b = uint8_t(s[pos + k]);
    if (b < lo || b > hi)
      return -k;
    c = c << 6 | (b & 0x3f);
    lo = 0x80, hi = 0xbf;
  }
  *cp = c;
  return need + 1;
}

} // namespace

uint32_t nextChar(std::string_view s, size_t *pos) {
  uint32_t cp;
  int n = scanUtf8(s, *pos, &cp);
  if (n > 0) {
    *pos += size_t(n);
    return cp;
  }
  return kInvalidByte | uint8_t(s[(*pos)++]);
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp & kInvalidByte) {
    out += char(cp & 0xff);
  } else if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | cp >> 6);
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | cp >> 12);
    out += char(0x80 | (cp >> 6 & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | cp >> 18);
    out += char(0x80 | (cp >> 12 & 0x3f));
    out += char(0x80 | (cp >> 6 & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

bool isValidUtf8(std::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();)
    if (nextChar(bytes, &pos) & kInvalidByte)
      return false;
  return true;
}

std::string toValidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    uint32_t cp;
    int n = scanUtf8(bytes, pos, &cp);
    if (n > 0) {
      out.append(bytes.substr(pos, size_t(n)));
      pos += size_t(n);
    } else {
      out += "\xef\xbf\xbd"; // U+FFFD
      pos += size_t(-n);
    }
  }
  return out;
}

} // namespace ingot::tok
