//===- JsonWriter.h - Small streaming JSON writer ---------------*- C++ -*-===//
//
// Emits well-formed JSON into a std::string, handling commas and indentation.
// Strings are escaped so the output is always valid UTF-8 JSON even when the
// input is not (names read from a file may be anything): quotes, backslashes
// and control characters are escaped, valid UTF-8 passes through, and each
// invalid byte becomes U+FFFD. Non-finite doubles, which JSON cannot express,
// are written as null.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ingot::json {

/// Appends `s` as a quoted JSON string.
inline void appendQuoted(std::string &out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    if (c < 0x80) {
      switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += char(c);
        }
      }
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence; reject overlong forms, surrogates and
    // code points above U+10FFFF.
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    uint32_t cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0f : c & 0x1f;
    bool valid = len && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) {
      unsigned char cc = s[i + k];
      valid = (cc & 0xc0) == 0x80;
      cp = cp << 6 | (cc & 0x3f);
    }
    static const uint32_t minForLen[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && cp >= minForLen[len] && cp <= 0x10ffff &&
            !(cp >= 0xd800 && cp <= 0xdfff);
    if (!valid) {
      out += "\\ufffd";
      ++i;
    } else if (cp == 0x2028 || cp == 0x2029) {
      // Legal JSON, but not legal in JavaScript source: escape them.
      out += cp == 0x2028 ? "\\u2028" : "\\u2029";
      i += len;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  out += '"';
}

class Writer {
public:
  /// indent == 0 writes everything on one line.
  explicit Writer(std::string *out, int indent = 2)
      : out_(out), indent_(indent) {}

  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  /// An inline array keeps its elements on one line (shapes, id lists).
  void beginArray(bool inlineItems = false) { open('[', inlineItems); }
  void endArray() { close(']'); }

  void key(std::string_view k) {
    separate();
    appendQuoted(*out_, k);
    *out_ += indent_ ? ": " : ":";
    afterKey_ = true;
  }
  void value(std::string_view s) { separate(), appendQuoted(*out_, s); }
  void value(const char *s) { value(std::string_view(s)); }
  void value(const std::string &s) { value(std::string_view(s)); }
  void value(bool b) { separate(), *out_ += b ? "true" : "false"; }
  template <typename Int,
            std::enable_if_t<
                std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  void value(Int v) {
    separate();
    *out_ += std::to_string(v);
  }
  void value(double d) {
    separate();
    if (!std::isfinite(d)) {
      *out_ += "null";
      return;
    }
    char buf[32]; // shortest text that reads back as the same double
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    out_->append(buf, r.ptr);
  }
  void null() { separate(), *out_ += "null"; }

  /// key + value in one call.
  template <typename T> void field(std::string_view k, const T &v) {
    key(k);
    value(v);
  }

private:
  struct Level {
    bool empty = true;
    bool inlineItems = false;
  };

  void open(char c, bool inlineItems = false) {
    separate();
    *out_ += c;
    bool parentInline = !levels_.empty() && levels_.back().inlineItems;
    levels_.push_back({true, inlineItems || parentInline});
  }
  void close(char c) {
    Level l = levels_.back();
    levels_.pop_back();
    if (!l.empty && !l.inlineItems)
      newline();
    *out_ += c;
  }
  /// Writes the comma and line break due before the next element.
  void separate() {
    if (afterKey_) {
      afterKey_ = false;
      return;
    }
    if (levels_.empty())
      return;
    Level &l = levels_.back();
    if (!l.empty)
      *out_ += l.inlineItems && indent_ ? ", " : ",";
    if (!l.inlineItems)
      newline();
    l.empty = false;
  }
  void newline() {
    if (!indent_)
      return;
    *out_ += '\n';
    out_->append(levels_.size() * size_t(indent_), ' ');
  }

  std::string *out_;
  int indent_;
  bool afterKey_ = false;
  std::vector<Level> levels_;
};

} // namespace ingot::json
