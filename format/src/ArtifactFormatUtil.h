//===- ArtifactFormatUtil.h - Messages of the artifact checks ---*- C++ -*-===//
//
// Shared by ArtifactFormat.cpp (header and section table) and
// ManifestValidate.cpp (manifest structure), so that both quote names read
// from a file the same way in their error messages.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <string>

namespace ingot::format {

/// A name from the file, safe to print: quoted, escaped, length-capped.
inline std::string quoted(const std::string &s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + (s.size() > 80 ? "...'" : "'");
}

inline Status fail(const std::string &msg) { return Status::error(msg); }

} // namespace ingot::format
