//===- ShapeRules.cpp - Output-shape rules shared by compiler and runtime -===//
//
// ONNX semantics. Where a dim is kDynamic the rules assume whatever value
// makes the op valid and keep every dim they can still prove: a dynamic dim
// broadcast against 5 is 5, against 1 it stays dynamic.
//
//===----------------------------------------------------------------------===//

#include "ingot/ShapeRules.h"

#include "ShapeRulesUtil.h"

#include <algorithm>
#include <limits>

namespace ingot::shape {
using namespace detail;

int64_t numElements(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (isDyn(d))
      return kDynamic;
  for (int64_t d : s)
    if (d == 0)
      return 0;
  // A product past int64 (symbolic bounds multiply up) saturates, so that
  // it reads as too large everywhere instead of wrapping to a small size.
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

std::string toString(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      r += ",";
    r += isDyn(s[i]) ? "?" : std::to_string(s[i]);
  }
  return r + "]";
}

bool normalizeAxis(int64_t axis, int64_t rank, int64_t *out) {
  if (axis < -rank || axis >= rank)
    return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

bool broadcast(const std::vector<Shape> &ins, Shape *out, std::string *error) {
  size_t rank = 0;
  for (const Shape &s : ins)
    rank = std::max(rank, s.size());
  Shape result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t known = -2; // the one non-1 static size seen, -2 = none yet
    bool sawDyn = false;
    for (const Shape &s : ins) {
      if (i + s.size() < rank)
        continue; // implicit leading 1
      int64_t d = s[i + s.size() - rank];
      if (isDyn(d)) {
        sawDyn = true;
      } else if (d != 1) {
        if (known != -2 && known != d) {
          std::string msg = "cannot broadcast shapes";
          for (const Shape &t : ins) {
            msg += ' ';
            msg += toString(t);
          }
          return fail(error, msg + ": dims " + std::to_string(known) + " and " +
                                 std::to_string(d) + " differ at output axis " +
                                 std::to_string(i));
        }
        known = d;
      }
    }
    result[i] = known != -2 ? known : (sawDyn ? kDynamic : 1);
  }
  *out = std::move(result);
  return true;
}

bool matmul(const Shape &a, const Shape &b, Shape *out, std::string *error) {
  if (a.empty() || b.empty())
    return fail(error, "matmul operands must have rank >= 1, got " +
                           toString(a) + " and " + toString(b));
  // numpy 1-D promotion: [K] @ B is [1,K] @ B and A @ [K] is A @ [K,1], with
  // the added dim dropped from the result.
  Shape pa = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape pb = b.size() == 1 ? Shape{b[0], 1} : b;
  int64_t k;
  if (!mergeEqual(pa.back(), pb[pb.size() - 2], &k))
    return fail(error, "matmul inner dims differ: " + toString(a) + " @ " +
                           toString(b));
  Shape batch;
  if (!broadcast(
          {Shape(pa.begin(), pa.end() - 2), Shape(pb.begin(), pb.end() - 2)},
          &batch, nullptr))
    return fail(error, "matmul batch dims do not broadcast: " + toString(a) +
                           " @ " + toString(b));
  if (a.size() != 1)
    batch.push_back(pa[pa.size() - 2]);
  if (b.size() != 1)
    batch.push_back(pb.back());
  *out = std::move(batch);
  return true;
}

bool gemm(const Shape &a, const Shape &b, const Shape *c, bool transA,
          bool transB, Shape *out, std::string *error) {
  if (a.size() != 2 || b.size() != 2)
    return fail(error, "gemm needs 2-D A and B, got " + toString(a) + " and " +
                           toString(b));
  int64_t m = transA ? a[1] : a[0], ka = transA ? a[0] : a[1];
  int64_t kb = transB ? b[1] : b[0], n = transB ? b[0] : b[1];
  int64_t k;
  if (!mergeEqual(ka, kb, &k))
    return fail(error, "gemm inner dims differ: A " + toString(a) +
                           (transA ? " (transposed)" : "") + ", B " +
                           toString(b) + (transB ? " (transposed)" : ""));
  Shape result{m, n};
  if (c) {
    if (c->size() > 2)
      return fail(error, "gemm C must have rank <= 2, got " + toString(*c));
    // C broadcasts one way onto (M, N); a static C dim != 1 also pins down a
    // dynamic M or N.
    for (size_t i = 0; i < c->size(); ++i) {
      int64_t cd = (*c)[i];
      int64_t &od = result[2 - c->size() + i];
      if (isDyn(cd) || cd == 1)
        continue;
      if (isDyn(od))
        od = cd;
      else if (od != cd)
        return fail(error, "gemm C " + toString(*c) +
                               " does not broadcast to " + toString({m, n}));
    }
  }
  *out = std::move(result);
  return true;
}

bool transpose(const Shape &in, const std::vector<int64_t> &perm, Shape *out,
               std::string *error) {
  int64_t rank = in.size();
  std::vector<int64_t> p = perm;
  if (p.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      p.push_back(i);
  if (int64_t(p.size()) != rank)
    return fail(error, "transpose perm has " + std::to_string(p.size()) +
                           " entries for rank " + std::to_string(rank));
  std::vector<bool> used(rank, false);
  Shape result(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (p[i] < 0 || p[i] >= rank || used[p[i]])
      return fail(error, "transpose perm " + toString(p) +
                             " is not a permutation of 0.." +
                             std::to_string(rank - 1));
    used[p[i]] = true;
    result[i] = in[p[i]];
  }
  *out = std::move(result);
  return true;
}

bool reshape(const Shape &in, const std::vector<int64_t> &target,
             bool allowZero, Shape *out, std::string *error) {
  auto bad = [&](const std::string &why) {
    return fail(error, "cannot reshape " + toString(in) + " to " +
                           toString(target) + ": " + why);
  };
  Shape result(target.size());
  int64_t inferAt = -1;
  bool hasZero = false;
  // Copied dims (0 without allowzero) cancel out of both element counts,
  // which keeps e.g. [?,64] -> [0,-1] exact.
  std::vector<bool> copied(in.size(), false);
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t t = target[i];
    if (t == -1) {
      if (inferAt >= 0)
        return bad("more than one -1");
      inferAt = i;
    } else if (t < -1) {
      return bad("negative dim " + std::to_string(t));
    } else if (t == 0 && !allowZero) {
      if (i >= in.size())
        return bad("0 at index " + std::to_string(i) +
                   " has no input dim to copy");
      result[i] = in[i];
      copied[i] = true;
    } else {
      hasZero |= t == 0;
      result[i] = t;
    }
  }
  if (allowZero && hasZero && inferAt >= 0)
    return bad("allowzero with both 0 and -1");
  int64_t inRest = 1, outRest = 1;
  bool inDyn = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (copied[i])
      continue;
    if (isDyn(in[i]))
      inDyn = true;
    else
      inRest *= in[i];
  }
  for (size_t i = 0; i < result.size(); ++i) {
    if (int64_t(i) == inferAt || (i < copied.size() && copied[i]))
      continue;
    outRest *= result[i]; // explicit dims are static
  }
  if (inferAt >= 0) {
    if (inDyn) {
      result[inferAt] = kDynamic;
    } else {
      if (outRest == 0 || inRest % outRest != 0)
        return bad(std::to_string(inRest) + " elements do not divide into " +
                   std::to_string(outRest));
      result[inferAt] = inRest / outRest;
    }
  } else if (!inDyn && inRest != outRest) {
    return bad("element counts differ (" + std::to_string(numElements(in)) +
               " vs " + std::to_string(numElements(result)) + ")");
  }
  *out = std::move(result);
  return true;
}

} // namespace ingot::shape
