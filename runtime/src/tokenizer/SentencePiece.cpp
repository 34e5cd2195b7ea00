//===- SentencePiece.cpp - Spaces, prefix and decoding of SPM BPE ---------===//
#include "SentencePiece.h"

#include "Unicode.h"

namespace ingot::tok {
namespace {

/// Splits "name+flag+flag" and hands each flag to `take`, which returns
/// false for an unknown or repeated one.
template <typename Take>
bool parseFlags(std::string_view spec, std::string_view what,
                std::string_view supported, std::string *error, Take take) {
  size_t plus = spec.find('+');
  if (spec.substr(0, plus) != "metaspace") {
    *error = "unknown SentencePiece " + std::string(what) + " '" +
             std::string(spec.substr(0, 40)) + "' (expected metaspace[" +
             std::string(supported) + "])";
    return false;
  }
  while (plus != std::string_view::npos) {
    size_t next = spec.find('+', plus + 1);
    std::string_view flag = spec.substr(plus + 1, next - plus - 1);
    if (!take(flag)) {
      *error = "unknown, repeated or conflicting SentencePiece " +
               std::string(what) + " option '" +
               std::string(flag.substr(0, 40)) +
               "' (supported: " + std::string(supported) + ")";
      return false;
    }
    plus = next;
  }
  return true;
}

/// Appends the bytes of a run of byte tokens as the ByteFallback decoder
/// does: the run as text when it is valid UTF-8, else U+FFFD per byte.
void flushBytes(std::string &bytes, std::string &out) {
  if (isValidUtf8(bytes)) {
    out += bytes;
  } else {
    for (size_t i = 0; i < bytes.size(); ++i)
      out += "\xef\xbf\xbd";
  }
  bytes.clear();
}

/// `token` with every "▁" replaced by `with`.
std::string replaceMarks(std::string_view token, std::string_view with) {
  std::string out;
  for (size_t at = 0;;) {
    size_t mark = token.find(kSpaceMark, at);
    out.append(token.substr(at, mark - at));
    if (mark == std::string_view::npos)
      return out;
    out += with;
    at = mark + kSpaceMark.size();
  }
}

} // namespace

bool parseSentencePieceOptions(std::string_view pretokenizer,
                               std::string_view decoder,
                               SentencePieceOptions *out, std::string *error) {
  SentencePieceOptions o;
  bool prefixSet = false;
  auto pre = [&](std::string_view f) {
    bool *flag = f == "split"           ? &o.split
                 : f == "ignore_merges" ? &o.ignoreMerges
                                        : nullptr;
    if (flag) {
      bool seen = *flag;
      *flag = true;
      return !seen;
    }
    SpacePrefix p = f == "prepend"  ? SpacePrefix::Prepend
                    : f == "first"  ? SpacePrefix::First
                    : f == "always" ? SpacePrefix::Always
                                    : SpacePrefix::None;
    if (p == SpacePrefix::None || prefixSet)
      return false;
    o.prefix = p, prefixSet = true;
    return true;
  };
  if (!parseFlags(pretokenizer, "pre-tokenizer",
                  "+prepend|+first|+always, +split, +ignore_merges", error,
                  pre))
    return false;
  auto dec = [&](std::string_view f) {
    if (f == "byte_fallback" && !o.decodeBytes)
      return o.decodeBytes = true;
    LeadingStrip s = f == "strip_space"         ? LeadingStrip::Space
                     : f == "strip_first_token" ? LeadingStrip::FirstToken
                                                : LeadingStrip::None;
    if (s == LeadingStrip::None || o.strip != LeadingStrip::None)
      return false;
    o.strip = s;
    return true;
  };
  if (!parseFlags(decoder, "decoder",
                  "+byte_fallback, +strip_space|+strip_first_token", error,
                  dec))
    return false;
  *out = o;
  return true;
}

std::string formatSentencePiecePretokenizer(const SentencePieceOptions &o) {
  static const char *const prefixes[] = {"", "+prepend", "+first", "+always"};
  return std::string("metaspace") + prefixes[int(o.prefix)] +
         (o.split ? "+split" : "") + (o.ignoreMerges ? "+ignore_merges" : "");
}

std::string formatSentencePieceDecoder(const SentencePieceOptions &o) {
  static const char *const strips[] = {"", "+strip_space",
                                       "+strip_first_token"};
  return std::string("metaspace") + (o.decodeBytes ? "+byte_fallback" : "") +
         strips[int(o.strip)];
}

void prepareStretch(std::string_view text, bool atTextStart,
                    const SentencePieceOptions &o, std::string *prepared,
                    std::vector<std::string_view> *pieces) {
  std::string s;
  s.reserve(text.size() + 8);
  for (char c : text) {
    if (c == ' ')
      s.append(kSpaceMark);
    else
      s.push_back(c);
  }
  bool marked = s.compare(0, kSpaceMark.size(), kSpaceMark) == 0;
  bool prefix = o.prefix == SpacePrefix::Prepend ||
                (o.prefix == SpacePrefix::Always && !marked) ||
                (o.prefix == SpacePrefix::First && !marked && atTextStart);
  *prepared = prefix ? std::string(kSpaceMark) + s : std::move(s);
  std::string_view p = *prepared;
  if (!o.split) {
    pieces->push_back(p);
    return;
  }
  // Each "▁" starts a piece (split with behaviour MergedWithNext).
  size_t start = 0;
  for (size_t mark = p.find(kSpaceMark, 1); mark != std::string_view::npos;
       mark = p.find(kSpaceMark, mark + kSpaceMark.size())) {
    if (mark > start)
      pieces->push_back(p.substr(start, mark - start));
    start = mark;
  }
  pieces->push_back(p.substr(start));
}

int byteTokenValue(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>')
    return -1;
  auto hex = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  int hi = hex(t[3]), lo = hex(t[4]);
  if (lo < 0)
    return -1;
  if (t[3] == '+') // Rust's from_str_radix takes a leading '+'
    return lo;
  return hi < 0 ? -1 : hi * 16 + lo;
}

std::string byteTokenName(uint8_t b) {
  static const char digits[] = "0123456789ABCDEF";
  return std::string("<0x") + digits[b >> 4] + digits[b & 15] + ">";
}

void SentencePieceDecoder::init(std::vector<std::string> raw,
                                const SentencePieceOptions &o) {
  options_ = o;
  raw_ = std::move(raw);
  text_.assign(raw_.size(), "");
  byte_.assign(raw_.size(), -1);
  for (size_t i = 0; i < raw_.size(); ++i) {
    text_[i] = replaceMarks(raw_[i], " ");
    if (o.decodeBytes)
      byte_[i] = int16_t(byteTokenValue(raw_[i]));
  }
}

std::string
SentencePieceDecoder::decode(const std::vector<int32_t> &ids) const {
  std::string out, bytes;
  bool first = true;
  for (int32_t id : ids) {
    if (id < 0 || id >= size() || raw_[id].empty())
      continue;
    if (byte_[id] >= 0) {
      bytes += char(byte_[id]);
    } else {
      flushBytes(bytes, out);
      out += first && options_.strip == LeadingStrip::FirstToken
                 ? replaceMarks(raw_[id], "")
                 : text_[id];
    }
    first = false;
  }
  flushBytes(bytes, out);
  if (options_.strip == LeadingStrip::Space && !out.empty() && out[0] == ' ')
    out.erase(0, 1);
  return out;
}

std::string SentencePieceDecoder::tokenBytes(int32_t id) const {
  if (id < 0 || id >= size())
    return {};
  return byte_[id] >= 0 ? std::string(1, char(byte_[id])) : text_[id];
}

} // namespace ingot::tok
