//===- TrackedValues.cpp - Values of small integer tensors through ops ----===//
//
// Shape rules track the values of small integer tensors (shape vectors, pad
// vectors) so that reshapes, pads and slices further on get static sizes,
// and the folders turn them into constants. These are the value rules of
// the ops that compute or rearrange such tensors.
//
//===----------------------------------------------------------------------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInferenceTensor.h"

#include <cstdint>

using namespace mlir;

namespace ingot::graph {
namespace {

/// Values of the elements at `at(output index)`, visiting the output's
/// row-major indices over `outDims`; nullopt unless every value is there.
template <typename At>
std::optional<std::vector<int64_t>> gatherValues(const shape::Shape &outDims,
                                                 const std::vector<int64_t> &v,
                                                 At at) {
  const int64_t n = shape::numElements(outDims);
  if (n == shape::kDynamic)
    return std::nullopt;
  std::vector<int64_t> idx(outDims.size(), 0), out;
  for (int64_t k = 0; k < n; ++k) {
    out.push_back(v[at(idx)]);
    for (size_t i = idx.size(); i-- > 0;) // next output index
      if (++idx[i] < outDims[i] || (idx[i] = 0, false))
        break;
  }
  return out;
}

/// Row-major strides of a static shape.
std::vector<int64_t> stridesOf(const shape::Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    st[i - 1] = st[i] * s[i];
  return st;
}

bool complete(const shape::Shape &in,
              const std::optional<std::vector<int64_t>> &values) {
  return values && shape::numElements(in) != shape::kDynamic &&
         int64_t(values->size()) == shape::numElements(in);
}

} // namespace

/// Elementwise integer arithmetic on tracked values (scalar or same size).
std::optional<std::vector<int64_t>>
foldIntBinary(Operation *op, const ValueInfo &a, const ValueInfo &b) {
  if (!a.values || !b.values)
    return std::nullopt;
  const auto &x = *a.values, &y = *b.values;
  if (x.size() != y.size() && x.size() != 1 && y.size() != 1)
    return std::nullopt;
  size_t n = std::max(x.size(), y.size());
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t l = x[x.size() == 1 ? 0 : i], h = y[y.size() == 1 ? 0 : i];
    if (l == kUnknownValue || h == kUnknownValue) {
      r[i] = kUnknownValue;
      continue;
    }
    // An overflowing result (the kernels wrap) is left unknown rather than
    // tracked as a size.
    bool overflow = false;
    if (isa<AddOp>(op))
      overflow = __builtin_add_overflow(l, h, &r[i]);
    else if (isa<SubOp>(op))
      overflow = __builtin_sub_overflow(l, h, &r[i]);
    else if (isa<MulOp>(op))
      overflow = __builtin_mul_overflow(l, h, &r[i]);
    else if (isa<DivOp>(op)) {
      overflow = h == 0 || (h == -1 && l == INT64_MIN);
      if (!overflow)
        r[i] = l / h;
    } else
      return std::nullopt;
    if (overflow)
      r[i] = kUnknownValue;
  }
  return r;
}

namespace {

/// f over the elements of tracked operands of equal size or one element.
template <typename F>
std::optional<std::vector<int64_t>>
foldElementwise(std::initializer_list<const ValueInfo *> ins, F f) {
  size_t n = 1;
  for (const ValueInfo *v : ins) {
    if (!v->values)
      return std::nullopt;
    if (v->values->size() != 1 && n != 1 && v->values->size() != n)
      return std::nullopt;
    n = std::max(n, v->values->size());
  }
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t args[3] = {0, 0, 0};
    int k = 0;
    bool unknown = false;
    for (const ValueInfo *v : ins) {
      int64_t x = (*v->values)[v->values->size() == 1 ? 0 : i];
      unknown |= x == kUnknownValue;
      args[k++] = x;
    }
    r[i] = unknown ? kUnknownValue : f(args);
  }
  return r;
}

} // namespace

std::optional<std::vector<int64_t>>
foldCompareOrMinMax(StringRef kind, const ValueInfo &a, const ValueInfo &b) {
  auto op = [&](int64_t x, int64_t y) -> std::optional<int64_t> {
    if (kind == "equal")
      return x == y;
    if (kind == "less")
      return x < y;
    if (kind == "less_equal")
      return x <= y;
    if (kind == "greater")
      return x > y;
    if (kind == "greater_equal")
      return x >= y;
    if (kind == "max")
      return std::max(x, y);
    if (kind == "min")
      return std::min(x, y);
    // Shape arithmetic such as (k - n % k) % k: Python's sign, as Mod.
    if (kind == "mod" && y != 0 && y != -1) {
      int64_t r = x % y;
      return r != 0 && (r < 0) != (y < 0) ? r + y : r;
    }
    return std::nullopt;
  };
  if (!op(0, 1))
    return std::nullopt;
  return foldElementwise({&a, &b}, [&](const int64_t *v) {
    std::optional<int64_t> r = op(v[0], v[1]);
    return r ? *r : kUnknownValue; // a division by zero: left to run time
  });
}

std::optional<std::vector<int64_t>>
foldWhere(const ValueInfo &c, const ValueInfo &x, const ValueInfo &y) {
  return foldElementwise(
      {&c, &x, &y}, [](const int64_t *v) { return v[0] != 0 ? v[1] : v[2]; });
}

std::optional<std::vector<int64_t>> foldNegate(const ValueInfo &x,
                                               bool logical) {
  return foldElementwise({&x}, [&](const int64_t *v) {
    return logical ? int64_t(v[0] == 0) : int64_t(0ULL - uint64_t(v[0]));
  });
}

/// The tracked values of a transpose (PyTorch's pad-vector arithmetic
/// transposes a [rank, 2] matrix of pads), when the shape is static.
std::optional<std::vector<int64_t>>
transposeValues(const shape::Shape &in, const std::vector<int64_t> &perm,
                const std::optional<std::vector<int64_t>> &values) {
  if (!complete(in, values) || perm.size() != in.size())
    return std::nullopt;
  const std::vector<int64_t> strides = stridesOf(in);
  shape::Shape outDims;
  for (int64_t p : perm)
    outDims.push_back(in[p]);
  return gatherValues(outDims, *values, [&](const std::vector<int64_t> &idx) {
    int64_t at = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      at += idx[i] * strides[perm[i]];
    return at;
  });
}

std::optional<std::vector<int64_t>>
sliceValues(const shape::Shape &in, const shape::Shape &out,
            const std::vector<int64_t> &firsts,
            const std::vector<int64_t> &steps,
            const std::optional<std::vector<int64_t>> &values) {
  if (!complete(in, values))
    return std::nullopt;
  const std::vector<int64_t> strides = stridesOf(in);
  return gatherValues(out, *values, [&](const std::vector<int64_t> &idx) {
    int64_t at = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      at += (firsts[i] + idx[i] * steps[i]) * strides[i];
    return at;
  });
}

} // namespace ingot::graph
