//===- ShapeRules.cpp - Output-shape rules shared by compiler and runtime -===//
//
// ONNX semantics. Where a dim is kDynamic the rules assume whatever value
// makes the op valid and keep every dim they can still prove: a dynamic dim
// broadcast against 5 is 5, against 1 it stays dynamic.
//
//===----------------------------------------------------------------------===//

#include "ingot/ShapeRules.h"

#include <algorithm>
#include <limits>

namespace ingot::shape {
namespace {

bool isDyn(int64_t d) { return d == kDynamic; }

bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

/// Normalises a list of axes against `rank`, rejecting duplicates.
bool normalizeAxes(const std::vector<int64_t> &axes, int64_t rank,
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
bool mergeEqual(int64_t a, int64_t b, int64_t *out) {
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

} // namespace

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

bool squeeze(const Shape &in, const std::vector<int64_t> &axes, Shape *out,
             std::string *error) {
  int64_t rank = in.size();
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) {
      if (isDyn(in[i]))
        return fail(error, "squeeze without axes on " + toString(in) +
                               ": dim " + std::to_string(i) +
                               " is dynamic, so the output rank is unknown");
      drop[i] = in[i] == 1;
    }
  } else {
    std::vector<int64_t> norm;
    if (!normalizeAxes(axes, rank, "squeeze", &norm, error))
      return false;
    for (int64_t a : norm) {
      if (!isDyn(in[a]) && in[a] != 1)
        return fail(error, "squeeze axis " + std::to_string(a) + " of " +
                               toString(in) + " has size " +
                               std::to_string(in[a]) + ", not 1");
      drop[a] = true;
    }
  }
  Shape result;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      result.push_back(in[i]);
  *out = std::move(result);
  return true;
}

bool unsqueeze(const Shape &in, const std::vector<int64_t> &axes, Shape *out,
               std::string *error) {
  int64_t rank = in.size() + axes.size();
  std::vector<int64_t> norm;
  if (!normalizeAxes(axes, rank, "unsqueeze", &norm, error))
    return false;
  Shape result(rank, 1);
  std::vector<bool> inserted(rank, false);
  for (int64_t a : norm)
    inserted[a] = true;
  size_t j = 0;
  for (int64_t i = 0; i < rank; ++i)
    if (!inserted[i])
      result[i] = in[j++];
  *out = std::move(result);
  return true;
}

bool concat(const std::vector<Shape> &ins, int64_t axis, Shape *out,
            std::string *error) {
  if (ins.empty())
    return fail(error, "concat needs at least one input");
  int64_t rank = ins[0].size();
  int64_t a;
  if (rank == 0 || !normalizeAxis(axis, rank, &a))
    return fail(error, "concat axis " + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(rank));
  Shape result = ins[0];
  for (size_t k = 1; k < ins.size(); ++k) {
    const Shape &s = ins[k];
    if (int64_t(s.size()) != rank)
      return fail(error, "concat inputs differ in rank: " + toString(ins[0]) +
                             " and " + toString(s));
    for (int64_t i = 0; i < rank; ++i) {
      if (i == a) {
        result[i] =
            isDyn(result[i]) || isDyn(s[i]) ? kDynamic : result[i] + s[i];
      } else if (!mergeEqual(result[i], s[i], &result[i])) {
        return fail(error, "concat inputs " + toString(ins[0]) + " and " +
                               toString(s) + " differ at axis " +
                               std::to_string(i) + " (concat axis is " +
                               std::to_string(a) + ")");
      }
    }
  }
  *out = std::move(result);
  return true;
}

bool gather(const Shape &data, const Shape &indices, int64_t axis, Shape *out,
            std::string *error) {
  int64_t rank = data.size();
  int64_t a;
  if (rank == 0 || !normalizeAxis(axis, rank, &a))
    return fail(error, "gather axis " + std::to_string(axis) +
                           " is out of range for data " + toString(data));
  Shape result(data.begin(), data.begin() + a);
  result.insert(result.end(), indices.begin(), indices.end());
  result.insert(result.end(), data.begin() + a + 1, data.end());
  *out = std::move(result);
  return true;
}

bool reduce(const Shape &in, const std::vector<int64_t> &axes, bool keepDims,
            Shape *out, std::string *error) {
  int64_t rank = in.size();
  std::vector<bool> reduced(rank, axes.empty());
  std::vector<int64_t> norm;
  if (!normalizeAxes(axes, rank, "reduce", &norm, error))
    return false;
  for (int64_t a : norm)
    reduced[a] = true;
  Shape result;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      result.push_back(in[i]);
    else if (keepDims)
      result.push_back(1);
  }
  *out = std::move(result);
  return true;
}

void shapeOpRange(int64_t rank, int64_t start, int64_t end, int64_t *begin,
                  int64_t *endOut) {
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t b = clamp(start), e = clamp(end);
  *begin = b;
  *endOut = std::max(b, e);
}

} // namespace ingot::shape
