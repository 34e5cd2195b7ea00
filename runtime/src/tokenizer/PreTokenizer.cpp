//===- PreTokenizer.cpp - Splitting text into BPE words -------------------===//
//
// Each matcher returns the length, in characters, of the match that the
// pattern's regex finds at position i: the first alternative that matches,
// with greedy quantifiers backed off only as far as the rest of that
// alternative needs. Since every character is matched by some alternative,
// the regex's find-all loop reduces to "match at i, continue at the end".
//
//===----------------------------------------------------------------------===//
#include "PreTokenizer.h"

#include "Unicode.h"

namespace ingot::tok {
namespace {

enum Class : uint8_t { Letter, Number, Space, Other };

/// The text as characters with their classes and byte offsets.
struct Chars {
  std::vector<uint32_t> cp;
  std::vector<Class> cls;
  std::vector<size_t> offset; // offset[i] of char i; offset[size] = end

  explicit Chars(std::string_view s) {
    for (size_t pos = 0; pos < s.size();) {
      offset.push_back(pos);
      uint32_t c = nextChar(s, &pos);
      cp.push_back(c);
      cls.push_back(isLetter(c)       ? Letter
                    : isNumber(c)     ? Number
                    : isWhiteSpace(c) ? Space
                                      : Other);
    }
    offset.push_back(s.size());
  }
  size_t size() const { return cp.size(); }
};

bool isCrLf(uint32_t c) { return c == '\r' || c == '\n'; }

/// End of the run of class `k` characters starting at i (within [.., end)).
size_t runEnd(const Chars &t, size_t i, size_t end, Class k) {
  while (i < end && t.cls[i] == k)
    ++i;
  return i;
}

/// `\s+(?!\S)|\s+` at a whitespace character i: the whole run if it reaches
/// the end, else all but its last character (which then starts the next
/// match), but at least one character.
size_t matchSpaces(const Chars &t, size_t i, size_t end) {
  size_t e = runEnd(t, i, end, Space);
  if (e == end || e - i == 1)
    return e - i;
  return e - i - 1;
}

/// ` ?X+` for X = the class of the character after an optional space.
size_t matchOptionalSpaceRun(const Chars &t, size_t i, size_t end) {
  size_t s = t.cp[i] == ' ' ? i + 1 : i;
  if (s < end && t.cls[s] != Space)
    return runEnd(t, s, end, t.cls[s]) - i;
  return 0;
}

size_t matchGpt2(const Chars &t, size_t i, size_t end) {
  if (t.cp[i] == '\'' && i + 1 < end) {
    uint32_t a = t.cp[i + 1], b = i + 2 < end ? t.cp[i + 2] : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
      return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
        (a == 'l' && b == 'l'))
      return 3;
  }
  if (size_t n = matchOptionalSpaceRun(t, i, end))
    return n;
  return matchSpaces(t, i, end);
}

/// Simple case folding of the letters the contractions use; U+017F (long s)
/// folds to 's', which Oniguruma's (?i) honours.
uint32_t foldAscii(uint32_t c) {
  if (c >= 'A' && c <= 'Z')
    return c | 0x20;
  return c == 0x17f ? 's' : c;
}

size_t matchLlama3(const Chars &t, size_t i, size_t end, size_t maxDigits) {
  uint32_t c = t.cp[i];
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (c == '\'' && i + 1 < end) {
    uint32_t a = foldAscii(t.cp[i + 1]);
    uint32_t b = i + 2 < end ? foldAscii(t.cp[i + 2]) : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
      return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
        (a == 'l' && b == 'l'))
      return 3;
  }
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (t.cls[i] == Letter)
    return runEnd(t, i, end, Letter) - i;
  if (t.cls[i] != Number && !isCrLf(c) && i + 1 < end && t.cls[i + 1] == Letter)
    return runEnd(t, i + 1, end, Letter) - i;
  // \p{N}{1,3} (llama3) or \p{N} (qwen2)
  if (t.cls[i] == Number) {
    size_t e = i;
    while (e < end && e - i < maxDigits && t.cls[e] == Number)
      ++e;
    return e - i;
  }
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  size_t s = c == ' ' ? i + 1 : i;
  if (s < end && t.cls[s] == Other) {
    size_t e = runEnd(t, s, end, Other);
    while (e < end && isCrLf(t.cp[e]))
      ++e;
    return e - i;
  }
  // `\s*[\r\n]+`: through the last line break of the whitespace run.
  size_t e = runEnd(t, i, end, Space);
  for (size_t k = e; k > i; --k)
    if (isCrLf(t.cp[k - 1]))
      return k - i;
  return matchSpaces(t, i, end);
}

void split(const Chars &t, std::string_view text, size_t begin, size_t end,
           SplitPattern pattern, std::vector<std::string_view> *pieces) {
  for (size_t i = begin; i < end;) {
    size_t n = pattern == SplitPattern::Llama3  ? matchLlama3(t, i, end, 3)
               : pattern == SplitPattern::Qwen2 ? matchLlama3(t, i, end, 1)
                                                : matchGpt2(t, i, end);
    if (n == 0) // unreachable: every character is matched; never loop
      n = 1;
    pieces->push_back(text.substr(t.offset[i], t.offset[i + n] - t.offset[i]));
    i += n;
  }
}

} // namespace

void preTokenize(std::string_view text, SplitPattern pattern,
                 std::vector<std::string_view> *pieces) {
  Chars t(text);
  if (pattern != SplitPattern::Gpt2Digits) {
    split(t, text, 0, t.size(), pattern, pieces);
    return;
  }
  // Digits(individual_digits=true) first: each number character (by Rust's
  // reckoning) is a piece of its own; the gpt2 pattern then runs within each
  // stretch in between (so its lookahead cannot see past a digit).
  size_t start = 0;
  for (size_t i = 0; i <= t.size(); ++i) {
    if (i < t.size() && !isDigitsNumeric(t.cp[i]))
      continue;
    split(t, text, start, i, SplitPattern::Gpt2, pieces);
    if (i < t.size())
      pieces->push_back(
          text.substr(t.offset[i], t.offset[i + 1] - t.offset[i]));
    start = i + 1;
  }
}

} // namespace ingot::tok
