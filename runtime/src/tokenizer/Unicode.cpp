//===- Unicode.cpp - Character classes, UTF-8 and NFC for tokenizing ------===//
#include "Unicode.h"

#include "UnicodeTables.h"

#include <algorithm>

namespace ingot::tok {
namespace {

using namespace tables;

bool inRanges(const CodeRange *r, size_t n, uint32_t cp) {
  const CodeRange *end = r + n;
  const CodeRange *it = std::upper_bound(
      r, end, cp, [](uint32_t c, const CodeRange &x) { return c < x.lo; });
  return it != r && cp <= (it - 1)->hi;
}

//===--- NFC --------------------------------------------------------------===//

// Hangul syllables decompose and compose arithmetically (Unicode ch. 3.12).
constexpr uint32_t kSBase = 0xac00, kLBase = 0x1100, kVBase = 0x1161,
                   kTBase = 0x11a7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28,
                   kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(uint32_t cp, std::vector<uint32_t> &out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + s % kNCount / kTCount);
    if (s % kTCount)
      out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto byCp = [](const auto &d, uint32_t c) { return d.cp < c; };
  const Decomposition *end = kDecompositions + kDecompositionCount;
  const Decomposition *it =
      std::lower_bound(kDecompositions, end, cp, byCp);
  if (it != end && it->cp == cp) {
    decompose(it->first, out);
    decompose(it->second, out);
    return;
  }
  const Singleton *send = kSingletons + kSingletonCount;
  const Singleton *one = std::lower_bound(kSingletons, send, cp, byCp);
  if (one != send && one->cp == cp)
    decompose(one->to, out);
  else
    out.push_back(cp);
}

bool compose(uint32_t a, uint32_t b, uint32_t *out) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase &&
      b < kVBase + kVCount) {
    *out = kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    return true;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 &&
      b > kTBase && b < kTBase + kTCount) {
    *out = a + (b - kTBase);
    return true;
  }
  const Composition *end = kCompositions + kCompositionCount;
  const Composition *it = std::lower_bound(
      kCompositions, end, std::make_pair(a, b),
      [](const Composition &c, const std::pair<uint32_t, uint32_t> &k) {
        return std::make_pair(c.first, c.second) < k;
      });
  if (it == end || it->first != a || it->second != b)
    return false;
  *out = it->composite;
  return true;
}

uint8_t cccOf(uint32_t cp) {
  return cp & kInvalidByte ? 0 : combiningClass(cp);
}

} // namespace

bool isLetter(uint32_t cp) {
  if (cp < 0x80)
    return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return inRanges(kLetterRanges, kLetterRangeCount, cp);
}

bool isNumber(uint32_t cp) {
  if (cp < 0x80)
    return cp >= '0' && cp <= '9';
  return inRanges(kNumberRanges, kNumberRangeCount, cp);
}

bool isDigitsNumeric(uint32_t cp) {
  if (cp < 0x80)
    return cp >= '0' && cp <= '9';
  return inRanges(kDigitsNumericRanges, kDigitsNumericRangeCount, cp);
}

bool isWhiteSpace(uint32_t cp) {
  if (cp < 0x80)
    return cp == ' ' || (cp >= 0x09 && cp <= 0x0d);
  return inRanges(kWhiteSpaceRanges, kWhiteSpaceRangeCount, cp);
}

uint8_t combiningClass(uint32_t cp) {
  if (cp < 0x300)
    return 0;
  const CccRange *end = kCccRanges + kCccRangeCount;
  const CccRange *it =
      std::upper_bound(kCccRanges, end, cp,
                       [](uint32_t c, const CccRange &r) { return c < r.lo; });
  return it != kCccRanges && cp <= (it - 1)->hi ? (it - 1)->ccc : 0;
}

std::string toNfc(std::string_view s) {
  // Below U+0300 every character is a starter without a decomposition that
  // composes with a following starter below U+0300 either, so such text is
  // already in NFC. That covers ASCII and most Latin text.
  bool simple = true;
  for (size_t pos = 0; pos < s.size() && simple;)
    simple = nextChar(s, &pos) < 0x300;
  if (simple)
    return std::string(s);

  std::vector<uint32_t> chars;
  for (size_t pos = 0; pos < s.size();)
    decompose(nextChar(s, &pos), chars);
  // Canonical ordering: a stable sort of each run of non-starters by class.
  for (size_t i = 1; i < chars.size(); ++i) {
    uint8_t c = cccOf(chars[i]);
    if (!c)
      continue;
    for (size_t j = i; j > 0 && cccOf(chars[j - 1]) > c; --j)
      std::swap(chars[j - 1], chars[j]);
  }
  // Canonical composition: combine each character with the last starter
  // unless a character in between blocks it.
  std::vector<uint32_t> out;
  size_t starter = SIZE_MAX;
  uint8_t lastCcc = 0;
  for (uint32_t c : chars) {
    uint8_t ccc = cccOf(c);
    if (starter != SIZE_MAX) {
      bool adjacent = starter + 1 == out.size();
      uint32_t composite;
      if ((adjacent || (lastCcc && lastCcc < ccc)) && !(c & kInvalidByte) &&
          !(out[starter] & kInvalidByte) &&
          compose(out[starter], c, &composite)) {
        out[starter] = composite;
        continue;
      }
    }
    if (!ccc)
      starter = out.size();
    lastCcc = ccc;
    out.push_back(c);
  }
  std::string result;
  result.reserve(s.size());
  for (uint32_t c : out)
    appendUtf8(result, c);
  return result;
}

} // namespace ingot::tok
