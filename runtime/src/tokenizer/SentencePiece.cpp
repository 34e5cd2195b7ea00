//===- SentencePiece.cpp - Spaces, prefix and decoding of SPM BPE ---------===//
#include "SentencePiece.h"

#include "Unicode.h"

namespace ingot::tok {
namespace {

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
