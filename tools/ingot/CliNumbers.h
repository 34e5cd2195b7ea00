//===- CliNumbers.h - Integer flag values of the `ingot` CLI ----*- C++ -*-===//
//
// Every integer flag of every subcommand goes through parseFlagInt, so a
// value that is not a whole number, overflows int64 or is out of the flag's
// range gets the same message: "--block-size 99999: expected an integer in
// 1..4096". The limits below are far beyond what a real model or machine
// uses, and low enough that nothing downstream overflows or allocates
// absurd amounts from them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace ingot::cli {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Engine and compile limits shared by the subcommands.
constexpr int64_t kMaxThreads = 1024;          // --threads; 0 = all cores
constexpr int64_t kMaxBlockSize = 4096;        // tokens per KV block
constexpr int64_t kMaxContext = int64_t(1) << 24;       // tokens of one sequence
constexpr int64_t kMaxTokensPerStep = int64_t(1) << 20; // tokens of one step
constexpr int64_t kMaxSeqs = 65536;            // sequences of one step
constexpr int64_t kMaxKvBlocks = int64_t(1) << 24;
constexpr int64_t kMaxKvCacheMb = int64_t(1) << 24;     // 16 TiB
constexpr int64_t kMaxNewTokens = kMaxContext;
constexpr int64_t kMaxDim = int64_t(1) << 40;  // one --shape/--max-dim value

/// A whole decimal int64: an optional '-' and digits, nothing else (no
/// spaces, no '+', no overflow); else false.
inline bool parseInt64(const char *s, int64_t *out) {
  if (!s)
    return false;
  const char *digits = *s == '-' ? s + 1 : s;
  if (*digits < '0' || *digits > '9')
    return false;
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (!*s || *end || errno)
    return false;
  *out = v;
  return true;
}

/// "FLAG TEXT: expected an integer in MIN..MAX" (TEXT missing: "FLAG
/// needs a value; ..."), the one message of every integer flag.
inline std::string flagRangeError(const std::string &flag, const char *text,
                                  int64_t min, int64_t max) {
  std::string where = text ? flag + " " + text : flag + " needs a value";
  return where + ": expected an integer in " + std::to_string(min) + ".." +
         std::to_string(max);
}

/// Parses `text` (the value of `flag`, null when it is missing) as an
/// integer in [min, max]; else sets *err to flagRangeError and returns false.
inline bool parseFlagInt(const std::string &flag, const char *text,
                         int64_t min, int64_t max, int64_t *out,
                         std::string *err) {
  int64_t v = 0;
  if (!parseInt64(text, &v) || v < min || v > max) {
    *err = flagRangeError(flag, text, min, max);
    return false;
  }
  *out = v;
  return true;
}

inline bool parseFlagInt(const std::string &flag, const std::string &text,
                         int64_t min, int64_t max, int64_t *out,
                         std::string *err) {
  return parseFlagInt(flag, text.c_str(), min, max, out, err);
}

/// Parses "2x5x48" into dims of 0..kInt32Max; false on anything else.
inline bool parseDims(const std::string &text, std::vector<int64_t> *dims) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t x = text.find('x', pos);
    std::string part = text.substr(pos, x == std::string::npos ? x : x - pos);
    int64_t dim = 0;
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
        !parseInt64(part.c_str(), &dim) || dim > kInt32Max)
      return false;
    dims->push_back(dim);
    if (x == std::string::npos)
      return true;
    pos = x + 1;
  }
  return false;
}

/// "SYMBOL=N" with N in 1..kInt32Max (the bounds pass multiplies them).
inline bool validMaxDim(const std::string &entry) {
  size_t eq = entry.find('=');
  int64_t n = 0;
  std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
  return eq != std::string::npos && eq > 0 &&
         value.find_first_not_of("0123456789") == std::string::npos &&
         parseInt64(value.c_str(), &n) && n >= 1 && n <= kInt32Max;
}

} // namespace ingot::cli
