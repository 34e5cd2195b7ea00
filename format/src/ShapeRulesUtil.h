//===- ShapeRulesUtil.h - Helpers of the shape rules ------------*- C++ -*-===//
//
// Private to ShapeRules.cpp and ShapeRulesAxes.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ShapeRules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ingot::shape::detail {

inline bool isDyn(int64_t d) { return d == kDynamic; }

inline bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

/// Normalises a list of axes against `rank`, rejecting duplicates.
inline bool normalizeAxes(const std::vector<int64_t> &axes, int64_t rank,
                          const char *what, std::vector<int64_t> *out,
                          std::string *error) {
  out->clear();
  for (int64_t a : axes) {
    int64_t n;
    if (!normalizeAxis(a, rank, &n))
      return fail(error, std::string(what) + " axis " + std::to_string(a) +
                             " is out of range for rank " +
                             std::to_string(rank));
    if (std::find(out->begin(), out->end(), n) != out->end())
      return fail(error, std::string(what) + " axis " + std::to_string(a) +
                             " is repeated");
    out->push_back(n);
  }
  return true;
}

/// Merges two dims that must be equal (concat's non-axis dims, matmul's K).
inline bool mergeEqual(int64_t a, int64_t b, int64_t *out) {
  if (isDyn(a)) {
    *out = b;
    return true;
  }
  if (isDyn(b) || a == b) {
    *out = a;
    return true;
  }
  return false;
}

} // namespace ingot::shape::detail
