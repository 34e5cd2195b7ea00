//===- MathReduce.cpp - reduce, arg_reduce, log_softmax, cumsum -----------===//
//
// Reductions walk the input once in memory order with the kept-dims output
// as a broadcast operand (stride 0 along reduced dims), so any axis set costs
// one pass. f32 sums accumulate in double; log_sum_exp takes a max pass
// first so exp never overflows. The single-axis kernels view the input as
// [outer, n, inner].
//
//===----------------------------------------------------------------------===//
#include "cpu/KernelUtil.h"

#include "cpu/ReduceMinMax.h"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

namespace ingot::cpu {
namespace {

/// acc + v and acc · v. Integers wrap as ONNX's do (and as uint64 held in
/// int64 needs), through uint64_t: signed overflow would be undefined.
template <typename Acc, typename T> Acc addWrapping(Acc acc, T v) {
  if constexpr (std::is_integral_v<Acc>)
    return Acc(uint64_t(acc) + uint64_t(Acc(v)));
  else
    return acc + Acc(v);
}
template <typename Acc, typename T> Acc mulWrapping(Acc acc, T v) {
  if constexpr (std::is_integral_v<Acc>)
    return Acc(uint64_t(acc) * uint64_t(Acc(v)));
  else
    return acc * Acc(v);
}

/// Calls fn(inIndex, outIndex) for every input element, in input order.
template <typename Fn>
Status forEachReduced(KernelContext &ctx, const shape::Shape &in,
                      const shape::Shape &kept, Fn fn) {
  if (shape::numElements(in) == 0)
    return Status::ok();
  BroadcastPlan plan;
  if (!makeBroadcastPlan(in, {&kept}, &plan))
    return ctx.error("rank " + std::to_string(in.size()) +
                     " is above the supported " + std::to_string(kMaxRank));
  const int64_t so = plan.strides[0][plan.rank - 1];
  int64_t pos = 0;
  forEachRun(plan, 0, plan.total, [&](const int64_t *off, int64_t cnt) {
    for (int64_t i = 0; i < cnt; ++i)
      fn(pos + i, off[0] + i * so);
    pos += cnt;
  });
  return Status::ok();
}

template <typename T, typename Acc>
Status reduceTyped(KernelContext &ctx, const std::string &kind,
                   const shape::Shape &kept) {
  const KernelInput &x = ctx.input(0);
  const T *in = x.as<T>();
  T *out = ctx.output(0).as<T>();
  const int64_t outN = shape::numElements(kept);
  constexpr bool isFloat = std::is_floating_point_v<T>;
  Acc init = 0;
  if (kind == "prod")
    init = 1;
  else if (kind == "max" || kind == "log_sum_exp")
    init = isFloat ? -std::numeric_limits<Acc>::infinity()
                   : Acc(std::numeric_limits<T>::lowest());
  else if (kind == "min") // bool (u8) min of nothing is true
    init = isFloat ? std::numeric_limits<Acc>::infinity()
           : std::is_same_v<T, uint8_t> ? Acc(1)
                                        : Acc(std::numeric_limits<T>::max());
  std::vector<Acc> acc(outN, init);
  Status st = Status::ok();
  if (kind == "sum" || kind == "mean")
    st = forEachReduced(ctx, x.shape, kept, [&](int64_t i, int64_t o) {
      acc[o] = addWrapping(acc[o], in[i]);
    });
  else if (kind == "prod")
    st = forEachReduced(ctx, x.shape, kept, [&](int64_t i, int64_t o) {
      acc[o] = mulWrapping(acc[o], in[i]);
    });
  else if (kind == "max" || kind == "log_sum_exp")
    st = forEachReduced(ctx, x.shape, kept, [&](int64_t i, int64_t o) {
      if (Acc(in[i]) > acc[o] || in[i] != in[i])
        acc[o] = in[i];
    });
  else if (kind == "min")
    st = forEachReduced(ctx, x.shape, kept, [&](int64_t i, int64_t o) {
      if (Acc(in[i]) < acc[o] || in[i] != in[i])
        acc[o] = in[i];
    });
  else if (kind == "sum_square" || kind == "l2")
    st = forEachReduced(ctx, x.shape, kept, [&](int64_t i, int64_t o) {
      acc[o] = addWrapping(acc[o], mulWrapping(Acc(in[i]), in[i]));
    });
  else
    return ctx.error("unknown kind \"" + kind + "\"");
  if (!st)
    return st;
  if (kind == "log_sum_exp") {
    std::vector<Acc> sum(outN, 0);
    st = forEachReduced(ctx, x.shape, kept, [&](int64_t i, int64_t o) {
      sum[o] += std::exp(Acc(in[i]) - acc[o]);
    });
    if (!st)
      return st;
    for (int64_t o = 0; o < outN; ++o)
      acc[o] = std::isinf(acc[o]) ? (sum[o] == 0 ? -INFINITY : acc[o])
                                  : acc[o] + std::log(sum[o]);
  }
  if (kind == "l2")
    for (Acc &v : acc)
      v = std::sqrt(v);
  if (kind == "mean") // 0/0 over an empty range is NaN, as in onnxruntime
    for (Acc &v : acc)
      v /= Acc(x.numElements()) / Acc(std::max<int64_t>(outN, 1));
  for (int64_t o = 0; o < outN; ++o)
    out[o] = T(acc[o]);
  return Status::ok();
}

Status reduceKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(
          0, {DType::F32, DType::I64, DType::I32, DType::Bool});
      !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  std::string kind;
  std::vector<int64_t> axes;
  int64_t keepDims, noop;
  if (Status s = ctx.attrStr("kind", &kind); !s)
    return s;
  if (Status s = ctx.attrInts("axes", &axes, std::vector<int64_t>{}); !s)
    return s;
  if (Status s = ctx.attrInt("keepdims", &keepDims, 1); !s)
    return s;
  if (Status s = ctx.attrInt("noop_with_empty_axes", &noop, 0); !s)
    return s;
  // Axes not known at compile time come as input 1.
  if (ctx.hasInput(1))
    if (Status s = readIndexVector(ctx, 1, &axes); !s)
      return s;
  if (ctx.hasInput(1) && axes.empty() && noop) {
    if (Status s = ctx.setOutputShape(0, x.shape); !s)
      return s;
    if (x.bytes())
      std::memcpy(ctx.output(0).data, x.data, x.bytes());
    return Status::ok();
  }
  bool floatOnly = kind == "l2" || kind == "sum_square" ||
                   kind == "log_sum_exp" || kind == "mean";
  if (floatOnly && x.dtype != DType::F32)
    return ctx.error("kind \"" + kind + "\" takes float32 only");
  if (x.dtype == DType::Bool && kind != "max" && kind != "min")
    return ctx.error("kind \"" + kind + "\" does not take bool");
  shape::Shape outShape, kept;
  std::string err;
  if (!shape::reduce(x.shape, axes, keepDims != 0, &outShape, &err))
    return ctx.error(err);
  shape::reduce(x.shape, axes, true, &kept, nullptr);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  if (x.dtype == DType::F32 && (kind == "max" || kind == "min") &&
      shape::numElements(kept) == 1 && x.numElements() > 0) {
    *ctx.output(0).as<float>() =
        minMaxAllF32(ctx, x.as<float>(), x.numElements(), kind == "max");
    return Status::ok();
  }
  if (x.dtype == DType::F32 && (kind == "max" || kind == "min") &&
      minMaxTrailingRowsF32(ctx, kept, kind == "max"))
    return Status::ok();
  switch (x.dtype) {
  case DType::F32:
    return reduceTyped<float, double>(ctx, kind, kept);
  case DType::I64:
    return reduceTyped<int64_t, int64_t>(ctx, kind, kept);
  case DType::Bool:
    return reduceTyped<uint8_t, int64_t>(ctx, kind, kept);
  default:
    return reduceTyped<int32_t, int64_t>(ctx, kind, kept);
  }
}

/// [outer, n, inner] view of `s` around `axis`.
void splitAt(const shape::Shape &s, int64_t axis, int64_t *outer, int64_t *n,
             int64_t *inner) {
  *outer = dimProduct(s, 0, axis);
  *n = s[axis];
  *inner = dimProduct(s, axis + 1, s.size());
}

Status axisAttr(KernelContext &ctx, const char *name, int64_t rank,
                int64_t *axis) {
  int64_t given;
  if (Status s = ctx.attrInt(name, &given); !s)
    return s;
  if (!shape::normalizeAxis(given, rank, axis))
    return ctx.error("axis " + std::to_string(given) +
                     " out of range for rank " + std::to_string(rank));
  return Status::ok();
}

template <typename T>
void argReduce(const T *in, int64_t *out, int64_t outer, int64_t n,
               int64_t inner, bool isMax, bool last) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *p = in + o * n * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < n; ++k) {
        T v = p[k * inner], b = p[best * inner];
        bool better = isMax ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
        if (better)
          best = k;
      }
      out[o * inner + i] = best;
    }
}

Status argReduceKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32, DType::I64, DType::I32});
      !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::I64}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  std::string kind;
  int64_t axis, keepDims, last;
  if (Status s = ctx.attrStr("kind", &kind); !s)
    return s;
  if (kind != "max" && kind != "min")
    return ctx.error("kind must be \"max\" or \"min\", got \"" + kind + "\"");
  if (Status s = axisAttr(ctx, "axis", x.shape.size(), &axis); !s)
    return s;
  if (Status s = ctx.attrInt("keepdims", &keepDims, 1); !s)
    return s;
  if (Status s = ctx.attrInt("select_last_index", &last, 0); !s)
    return s;
  if (x.shape[axis] == 0)
    return ctx.error("arg_reduce over an empty axis");
  shape::Shape outShape;
  std::string err;
  if (!shape::reduce(x.shape, {axis}, keepDims != 0, &outShape, &err))
    return ctx.error(err);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  int64_t outer, n, inner;
  splitAt(x.shape, axis, &outer, &n, &inner);
  int64_t *out = ctx.output(0).as<int64_t>();
  bool isMax = kind == "max";
  if (x.dtype == DType::F32)
    argReduce(x.as<float>(), out, outer, n, inner, isMax, last != 0);
  else if (x.dtype == DType::I64)
    argReduce(x.as<int64_t>(), out, outer, n, inner, isMax, last != 0);
  else
    argReduce(x.as<int32_t>(), out, outer, n, inner, isMax, last != 0);
  return Status::ok();
}

Status logSoftmaxKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  int64_t axis;
  if (Status s = axisAttr(ctx, "axis", x.shape.size(), &axis); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  int64_t outer, n, inner;
  splitAt(x.shape, axis, &outer, &n, &inner);
  const float *in = x.as<float>();
  float *out = ctx.output(0).as<float>();
  ctx.parallelFor(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)),
                  [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t base = (r / inner) * n * inner + r % inner;
      float m = -INFINITY;
      for (int64_t k = 0; k < n; ++k)
        m = std::max(m, in[base + k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k)
        sum += std::exp(double(in[base + k * inner]) - m);
      double shift = double(m) + std::log(sum);
      for (int64_t k = 0; k < n; ++k)
        out[base + k * inner] = float(in[base + k * inner] - shift);
    }
  });
  return Status::ok();
}

template <typename T, typename Acc>
void cumsum(const T *in, T *out, int64_t outer, int64_t n, int64_t inner,
            bool exclusive, bool reverse) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * n * inner + i;
      Acc acc = 0;
      for (int64_t j = 0; j < n; ++j) {
        int64_t k = reverse ? n - 1 - j : j;
        T v = in[base + k * inner];
        if (exclusive) {
          out[base + k * inner] = T(acc);
          acc = addWrapping(acc, v);
        } else {
          acc = addWrapping(acc, v);
          out[base + k * inner] = T(acc);
        }
      }
    }
}

Status cumsumKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32, DType::I64, DType::I32});
      !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  int64_t axis, exclusive, reverse;
  // A run-time axis (input 1) replaces the attribute.
  if (ctx.hasInput(1)) {
    std::vector<int64_t> given;
    if (Status s = readIndexVector(ctx, 1, &given); !s)
      return s;
    int64_t rank = x.shape.size();
    if (given.size() != 1 || !shape::normalizeAxis(given[0], rank, &axis))
      return ctx.error("axis " + shape::toString(given) +
                       " is not one value in range for rank " +
                       std::to_string(rank));
  } else if (Status s = axisAttr(ctx, "axis", x.shape.size(), &axis); !s) {
    return s;
  }
  if (Status s = ctx.attrInt("exclusive", &exclusive, 0); !s)
    return s;
  if (Status s = ctx.attrInt("reverse", &reverse, 0); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  int64_t outer, n, inner;
  splitAt(x.shape, axis, &outer, &n, &inner);
  bool ex = exclusive != 0, rev = reverse != 0;
  if (x.dtype == DType::F32)
    cumsum<float, double>(x.as<float>(), ctx.output(0).as<float>(), outer, n,
                          inner, ex, rev);
  else if (x.dtype == DType::I64)
    cumsum<int64_t, int64_t>(x.as<int64_t>(), ctx.output(0).as<int64_t>(),
                             outer, n, inner, ex, rev);
  else
    cumsum<int32_t, int64_t>(x.as<int32_t>(), ctx.output(0).as<int32_t>(),
                             outer, n, inner, ex, rev);
  return Status::ok();
}

} // namespace

void addMathReduceKernels(std::vector<KernelImpl> &table) {
  table.push_back({"reduce", reduceKernel});
  table.push_back({"arg_reduce", argReduceKernel});
  table.push_back({"log_softmax", logSoftmaxKernel});
  table.push_back({"cumsum", cumsumKernel});
}

} // namespace ingot::cpu
