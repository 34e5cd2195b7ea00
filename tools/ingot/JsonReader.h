//===- JsonReader.h - Small strict JSON parser ------------------*- C++ -*-===//
//
// Reads one JSON value (RFC 8259) for the CLI's batch files, which may come
// from anywhere: every read is bounds-checked, nesting is limited (so a
// hostile line cannot exhaust the stack), and anything outside the grammar
// is an error naming the column: trailing commas, comments, leading zeros,
// NaN, control characters and invalid UTF-8 in strings, lone surrogates,
// duplicate keys, and text after the value. Integers written without a
// fraction or exponent that fit an int64 are kept exactly (seeds, token ids).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ingot::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  bool isInteger = false; // written as an integer and fits int64
  int64_t integer = 0;
  std::string string;
  std::vector<Value> items;    // arrays
  struct Member;               // {first: key, second: value}
  std::vector<Member> members; // objects, in order

  const Value *find(std::string_view key) const;
};

// A named struct, not std::pair<std::string, Value>: a pair of the still
// incomplete Value cannot be a vector's element inside Value (clang with
// libstdc++ refuses it).
struct Value::Member {
  std::string first;
  Value second;
};

inline const Value *Value::find(std::string_view key) const {
  for (const auto &m : members)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

inline const char *kindName(Value::Kind k) {
  switch (k) {
  case Value::Kind::Null:
    return "null";
  case Value::Kind::Bool:
    return "a boolean";
  case Value::Kind::Number:
    return "a number";
  case Value::Kind::String:
    return "a string";
  case Value::Kind::Array:
    return "an array";
  case Value::Kind::Object:
    return "an object";
  }
  return "?";
}

class Reader {
public:
  explicit Reader(std::string_view text, int maxDepth = 32)
      : s_(text), maxDepth_(maxDepth) {}

  /// Parses the whole text as one value; on failure returns false with
  /// "column N: what" in *error.
  bool parse(Value *out, std::string *error) {
    pos_ = 0;
    error_.clear();
    skipSpace();
    bool ok = value(out, 0);
    skipSpace();
    if (ok && pos_ != s_.size())
      ok = fail("unexpected text after the value");
    if (!ok)
      *error = error_;
    return ok;
  }

private:
  bool fail(const std::string &what) {
    if (error_.empty())
      error_ = "column " + std::to_string(pos_ + 1) + ": " + what;
    return false;
  }
  bool more() const { return pos_ < s_.size(); }
  char peek() const { return more() ? s_[pos_] : '\0'; }
  void skipSpace() {
    while (more() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                      peek() == '\r'))
      ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word)
      return fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool value(Value *out, int depth) {
    *out = Value();
    if (!more())
      return fail("expected a value");
    switch (peek()) {
    case '{':
      return object(out, depth + 1);
    case '[':
      return array(out, depth + 1);
    case '"':
      out->kind = Value::Kind::String;
      return string(&out->string);
    case 't':
      out->kind = Value::Kind::Bool;
      out->boolean = true;
      return literal("true");
    case 'f':
      out->kind = Value::Kind::Bool;
      return literal("false");
    case 'n':
      return literal("null");
    default:
      return number(out);
    }
  }

  bool object(Value *out, int depth) {
    if (depth > maxDepth_)
      return fail("nesting deeper than " + std::to_string(maxDepth_));
    out->kind = Value::Kind::Object;
    ++pos_; // '{'
    skipSpace();
    if (peek() == '}')
      return ++pos_, true;
    while (true) {
      skipSpace();
      if (peek() != '"')
        return fail("expected a key string");
      std::string key;
      if (!string(&key))
        return false;
      if (out->find(key))
        return fail("duplicate key '" + key + "'");
      skipSpace();
      if (peek() != ':')
        return fail("expected ':' after key '" + key + "'");
      ++pos_;
      skipSpace();
      Value v;
      if (!value(&v, depth))
        return false;
      out->members.emplace_back(std::move(key), std::move(v));
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}')
        return ++pos_, true;
      return fail("expected ',' or '}'");
    }
  }

  bool array(Value *out, int depth) {
    if (depth > maxDepth_)
      return fail("nesting deeper than " + std::to_string(maxDepth_));
    out->kind = Value::Kind::Array;
    ++pos_; // '['
    skipSpace();
    if (peek() == ']')
      return ++pos_, true;
    while (true) {
      skipSpace();
      out->items.emplace_back();
      if (!value(&out->items.back(), depth))
        return false;
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']')
        return ++pos_, true;
      return fail("expected ',' or ']'");
    }
  }

  bool hex4(uint32_t *cp) {
    if (s_.size() - pos_ < 4)
      return fail("truncated \\u escape");
    *cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0)
        return fail("bad hex digit in \\u escape");
      *cp = *cp << 4 | uint32_t(d);
    }
    return true;
  }

  static void appendUtf8(std::string *out, uint32_t cp) {
    if (cp < 0x80) {
      *out += char(cp);
    } else if (cp < 0x800) {
      *out += char(0xc0 | cp >> 6);
      *out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *out += char(0xe0 | cp >> 12);
      *out += char(0x80 | (cp >> 6 & 0x3f));
      *out += char(0x80 | (cp & 0x3f));
    } else {
      *out += char(0xf0 | cp >> 18);
      *out += char(0x80 | (cp >> 12 & 0x3f));
      *out += char(0x80 | (cp >> 6 & 0x3f));
      *out += char(0x80 | (cp & 0x3f));
    }
  }

  /// Copies one valid UTF-8 sequence starting at pos_ (the lead byte is
  /// >= 0x80); overlong forms, surrogates and > U+10FFFF are invalid.
  bool utf8(std::string *out) {
    unsigned char c = s_[pos_];
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    uint32_t cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0f : c & 0x1f;
    bool ok = len && s_.size() - pos_ >= len;
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = s_[pos_ + k];
      ok = (cc & 0xc0) == 0x80;
      cp = cp << 6 | (cc & 0x3f);
    }
    static const uint32_t minForLen[] = {0, 0, 0x80, 0x800, 0x10000};
    if (!ok || cp < minForLen[len] || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return fail("invalid UTF-8 in a string");
    out->append(s_.substr(pos_, len));
    pos_ += len;
    return true;
  }

  bool string(std::string *out) {
    ++pos_; // '"'
    while (true) {
      if (!more())
        return fail("unterminated string");
      unsigned char c = s_[pos_];
      if (c == '"')
        return ++pos_, true;
      if (c < 0x20)
        return fail("control character in a string");
      if (c >= 0x80) {
        if (!utf8(out))
          return false;
        continue;
      }
      ++pos_;
      if (c != '\\') {
        *out += char(c);
        continue;
      }
      if (!more())
        return fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        *out += e;
        break;
      case 'b':
        *out += '\b';
        break;
      case 'f':
        *out += '\f';
        break;
      case 'n':
        *out += '\n';
        break;
      case 'r':
        *out += '\r';
        break;
      case 't':
        *out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(&cp))
          return false;
        if (cp >= 0xdc00 && cp <= 0xdfff)
          return fail("lone low surrogate in \\u escape");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          uint32_t low;
          if (s_.substr(pos_, 2) != "\\u")
            return fail("high surrogate without its low half");
          pos_ += 2;
          if (!hex4(&low))
            return false;
          if (low < 0xdc00 || low > 0xdfff)
            return fail("high surrogate without its low half");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  bool number(Value *out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (more() && peek() >= '0' && peek() <= '9')
        ++pos_;
      return pos_ - from;
    };
    if (peek() == '-')
      ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digits() == 0) {
      pos_ = start;
      return fail("expected a value");
    }
    bool integral = true;
    if (peek() == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0)
        return fail("expected digits after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      integral = false;
      if (peek() == '+' || peek() == '-')
        ++pos_;
      if (digits() == 0)
        return fail("expected digits in the exponent");
    }
    if (more() && peek() >= '0' && peek() <= '9')
      return fail("leading zero in a number");
    const char *b = s_.data() + start, *e = s_.data() + pos_;
    out->kind = Value::Kind::Number;
    auto r = std::from_chars(b, e, out->number);
    if (r.ec != std::errc() || r.ptr != e)
      return fail("number out of range");
    if (integral) {
      auto ri = std::from_chars(b, e, out->integer);
      out->isInteger = ri.ec == std::errc() && ri.ptr == e;
    }
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int maxDepth_;
  std::string error_;
};

} // namespace ingot::json
