//===- TokenizerFormat.cpp - Parsing the manifest tokenizer strings -----===//
#include "ingot/TokenizerFormat.h"

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

} // namespace

bool parseTokenizerOptions(std::string_view spec, TokenizerOptions *out,
                           std::string *error) {
  TokenizerOptions o;
  size_t plus = spec.find('+');
  std::string_view name = spec.substr(0, plus);
  if (name == "gpt2")
    o.pattern = SplitPattern::Gpt2;
  else if (name == "llama3")
    o.pattern = SplitPattern::Llama3;
  else if (name == "qwen2")
    o.pattern = SplitPattern::Qwen2;
  else if (name == "gpt2-digits")
    o.pattern = SplitPattern::Gpt2Digits;
  else {
    *error = "unknown pre-tokenizer '" + std::string(name.substr(0, 40)) +
             "' (supported: gpt2, llama3, qwen2, gpt2-digits)";
    return false;
  }
  while (plus != std::string_view::npos) {
    size_t next = spec.find('+', plus + 1);
    std::string_view flag = spec.substr(plus + 1, next - plus - 1);
    bool *slot = flag == "nfc"             ? &o.nfc
                 : flag == "ignore_merges" ? &o.ignoreMerges
                                           : nullptr;
    if (!slot || *slot) {
      *error = "unknown or repeated pre-tokenizer option '" +
               std::string(flag.substr(0, 40)) +
               "' (supported: +nfc, +ignore_merges)";
      return false;
    }
    *slot = true;
    plus = next;
  }
  *out = o;
  return true;
}

std::string formatTokenizerOptions(const TokenizerOptions &o) {
  static const char *const names[] = {"gpt2", "llama3", "qwen2", "gpt2-digits"};
  std::string s = names[int(o.pattern)];
  if (o.nfc)
    s += "+nfc";
  if (o.ignoreMerges)
    s += "+ignore_merges";
  return s;
}

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

bool isKnownChatTemplate(std::string_view t) {
  return t.empty() || t == "chatml" || t == "llama3" || t == "gemma" ||
         t == "gemma-nosystem" || t == "mistral" ||
         t.substr(0, kChatmlWithSystem.size()) == kChatmlWithSystem;
}

} // namespace ingot::tok
