//===- ShapeRulesAxes.cpp - Shape rules of the axis-list ops --------------===//
//
// Squeeze, Unsqueeze, Concat, Gather and the reductions: the rules that
// drop, insert or join dims named by axes (ONNX semantics, dynamic dims as
// in ShapeRules.cpp).
//
//===----------------------------------------------------------------------===//

#include "ingot/ShapeRules.h"

#include "ShapeRulesUtil.h"

namespace ingot::shape {

using namespace detail;

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
