//===- MathKernels.cpp - unary_math, binary_math, compare -----------------===//
//
// The elementwise kernels of the math family (docs/kernels-math.md). The
// `kind` attribute is resolved once per step into a functor, so the inner
// loops are plain per-type loops the compiler can vectorise. None of these
// is in-place: the planner gives them their own output buffers.
//
//===----------------------------------------------------------------------===//
#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"

#include <cmath>
#include <string>

namespace ingot::cpu {

void addMathReduceKernels(std::vector<KernelImpl> &table); // MathReduce.cpp

namespace {

Status unknownKind(const KernelContext &ctx, const std::string &kind) {
  return ctx.error("unknown kind \"" + kind + "\"");
}

template <typename T, typename Fn>
void mapUnary(KernelContext &ctx, const T *in, T *out, int64_t n, Fn fn) {
  ctx.parallelFor(n, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      out[i] = fn(in[i]);
  });
}

float softplus(float x) {
  // log(1 + e^x) without overflow for large x.
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

Status floatUnary(KernelContext &ctx, const std::string &kind, const float *in,
                  float *out, int64_t n) {
  double alpha = 0, beta = 0;
  if (kind == "hard_sigmoid" || kind == "leaky_relu" || kind == "elu")
    if (Status s = ctx.attrFloat("alpha", &alpha); !s)
      return s;
  if (kind == "hard_sigmoid")
    if (Status s = ctx.attrFloat("beta", &beta); !s)
      return s;
  const float a = float(alpha), b = float(beta);
  if (kind == "reciprocal")
    mapUnary(ctx, in, out, n, [](float x) { return 1.0f / x; });
  else if (kind == "log")
    mapUnary(ctx, in, out, n, [](float x) { return std::log(x); });
  else if (kind == "abs")
    mapUnary(ctx, in, out, n, [](float x) { return std::fabs(x); });
  else if (kind == "softplus")
    mapUnary(ctx, in, out, n, softplus);
  else if (kind == "mish")
    mapUnary(ctx, in, out, n,
             [](float x) { return x * std::tanh(softplus(x)); });
  else if (kind == "sin")
    mapUnary(ctx, in, out, n, [](float x) { return std::sin(x); });
  else if (kind == "cos")
    mapUnary(ctx, in, out, n, [](float x) { return std::cos(x); });
  else if (kind == "floor")
    mapUnary(ctx, in, out, n, [](float x) { return std::floor(x); });
  else if (kind == "ceil")
    mapUnary(ctx, in, out, n, [](float x) { return std::ceil(x); });
  else if (kind == "round") // the default rounding mode: half to even
    mapUnary(ctx, in, out, n, roundHalfEven);
  else if (kind == "sign")
    mapUnary(ctx, in, out, n,
             [](float x) { return float((x > 0) - (x < 0)); });
  else if (kind == "hard_sigmoid")
    mapUnary(ctx, in, out, n, [a, b](float x) {
      return std::max(0.0f, std::min(1.0f, a * x + b));
    });
  else if (kind == "leaky_relu")
    mapUnary(ctx, in, out, n, [a](float x) { return x < 0 ? a * x : x; });
  else if (kind == "elu")
    mapUnary(ctx, in, out, n,
             [a](float x) { return x < 0 ? a * std::expm1(x) : x; });
  else
    return unknownKind(ctx, kind);
  return Status::ok();
}

template <typename T>
Status intUnary(KernelContext &ctx, const std::string &kind, const T *in,
                T *out, int64_t n) {
  if (kind == "abs") // wraps at MIN like onnxruntime, without UB
    mapUnary(ctx, in, out, n, [](T x) {
      using U = std::make_unsigned_t<T>;
      return x < 0 ? T(U(0) - U(x)) : x;
    });
  else if (kind == "sign")
    mapUnary(ctx, in, out, n, [](T x) { return T((x > 0) - (x < 0)); });
  else
    return ctx.error("kind \"" + kind + "\" does not take " +
                     dtypeName(ctx.input(0).dtype));
  return Status::ok();
}

Status unaryMathKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(
          0, {DType::F32, DType::I64, DType::I32, DType::Bool});
      !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  std::string kind;
  if (Status s = ctx.attrStr("kind", &kind); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  int64_t n = x.numElements();
  switch (x.dtype) {
  case DType::F32:
    return floatUnary(ctx, kind, x.as<float>(), ctx.output(0).as<float>(), n);
  case DType::I64:
    return intUnary(ctx, kind, x.as<int64_t>(), ctx.output(0).as<int64_t>(), n);
  case DType::I32:
    return intUnary(ctx, kind, x.as<int32_t>(), ctx.output(0).as<int32_t>(), n);
  default:
    if (kind != "not")
      return ctx.error("kind \"" + kind + "\" does not take bool");
    mapUnary(ctx, x.as<uint8_t>(), ctx.output(0).as<uint8_t>(), n,
             [](uint8_t v) { return uint8_t(v == 0); });
    return Status::ok();
  }
}

/// Walks the broadcast of inputs 0 and 1 to the output, calling
/// out[i] = fn(a[i], b[i]) with R the output element type.
template <typename T, typename R, typename Fn>
Status mapBinary(KernelContext &ctx, Fn fn) {
  const KernelInput &a = ctx.input(0), &b = ctx.input(1);
  shape::Shape outShape;
  std::string err;
  if (!shape::broadcast({a.shape, b.shape}, &outShape, &err))
    return ctx.error(err);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  BroadcastPlan p;
  if (!makeBroadcastPlan(outShape, {&a.shape, &b.shape, &outShape}, &p))
    return ctx.error("rank " + std::to_string(outShape.size()) +
                     " is above the supported " + std::to_string(kMaxRank));
  const T *pa = a.as<T>(), *pb = b.as<T>();
  R *out = ctx.output(0).as<R>();
  const int last = p.rank - 1;
  const int64_t sa = p.strides[0][last], sb = p.strides[1][last];
  ctx.parallelFor(p.total, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    forEachRun(p, begin, end, [&](const int64_t *off, int64_t n) {
      const T *x = pa + off[0], *y = pb + off[1];
      R *o = out + off[2];
      // Each stride pattern its own loop: with the strides as variables
      // the loop did not vectorise (Magika's one-hot Equal of [2048, 1]
      // against [1, 257] took 500 us).
      if (sa == 1 && sb == 1)
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(x[i], y[i]);
      else if (sa == 0 && sb == 1)
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(x[0], y[i]);
      else if (sa == 1 && sb == 0)
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(x[i], y[0]);
      else
        for (int64_t i = 0; i < n; ++i)
          o[i] = fn(x[i * sa], y[i * sb]);
    });
  });
  return Status::ok();
}

Status checkSameDTypes(KernelContext &ctx) {
  if (ctx.input(0).dtype != ctx.input(1).dtype)
    return ctx.error(std::string("operand dtypes differ: ") +
                     dtypeName(ctx.input(0).dtype) + " and " +
                     dtypeName(ctx.input(1).dtype));
  return Status::ok();
}

template <typename T> Status minMax(KernelContext &ctx, bool isMax) {
  // NaN propagates from either side, as in onnxruntime's Max/Min.
  if (isMax)
    return mapBinary<T, T>(ctx, [](T x, T y) {
      return x != x ? x : y != y ? y : (x < y ? y : x);
    });
  return mapBinary<T, T>(ctx, [](T x, T y) {
    return x != x ? x : y != y ? y : (y < x ? y : x);
  });
}

/// mod (ONNX Mod, fmod = 0: the divisor's sign, as Python's %), fmod (the
/// dividend's sign, as C's fmod), shifts and bitwise ops on integers.
/// Division by zero gives 0 rather than a trap; shifts of 64 or more bits
/// give 0, as onnxruntime's.
template <typename T>
Status integerBinary(KernelContext &ctx, const std::string &kind) {
  using U = std::make_unsigned_t<T>;
  constexpr int kBits = int(sizeof(T) * 8);
  if (kind == "mod")
    return mapBinary<T, T>(ctx, [](T x, T y) -> T {
      if (y == 0 || y == T(-1))
        return T(0);
      T r = T(x % y);
      return r != 0 && ((r < 0) != (y < 0)) ? T(r + y) : r;
    });
  if (kind == "fmod")
    return mapBinary<T, T>(ctx, [](T x, T y) -> T {
      return y == 0 || y == T(-1) ? T(0) : T(x % y);
    });
  if (kind == "shift_left")
    return mapBinary<T, T>(ctx, [](T x, T y) -> T {
      return U(y) >= U(kBits) ? T(0) : T(U(x) << U(y));
    });
  if (kind == "shift_right")
    return mapBinary<T, T>(ctx, [](T x, T y) -> T {
      return U(y) >= U(kBits) ? T(0) : T(U(x) >> U(y));
    });
  if (kind == "bitwise_and")
    return mapBinary<T, T>(ctx, [](T x, T y) { return T(x & y); });
  if (kind == "bitwise_or")
    return mapBinary<T, T>(ctx, [](T x, T y) { return T(x | y); });
  if (kind == "bitwise_xor")
    return mapBinary<T, T>(ctx, [](T x, T y) { return T(x ^ y); });
  return unknownKind(ctx, kind);
}

bool isIntegerKind(const std::string &kind) {
  return kind == "mod" || kind == "fmod" || kind == "shift_left" ||
         kind == "shift_right" || kind == "bitwise_and" ||
         kind == "bitwise_or" || kind == "bitwise_xor";
}

Status binaryMathKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(
          0, {DType::F32, DType::I64, DType::I32, DType::Bool});
      !s)
    return s;
  if (Status s = checkSameDTypes(ctx); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {ctx.input(0).dtype}); !s)
    return s;
  std::string kind;
  if (Status s = ctx.attrStr("kind", &kind); !s)
    return s;
  DType t = ctx.input(0).dtype;
  if (kind == "max" || kind == "min") {
    bool isMax = kind == "max";
    switch (t) {
    case DType::F32:
      return minMax<float>(ctx, isMax);
    case DType::I64:
      return minMax<int64_t>(ctx, isMax);
    case DType::I32:
      return minMax<int32_t>(ctx, isMax);
    default:
      return ctx.error("kind \"" + kind + "\" does not take bool");
    }
  }
  if (kind == "fmod" && t == DType::F32)
    return mapBinary<float, float>(
        ctx, [](float x, float y) { return std::fmod(x, y); });
  if (kind == "mod" && t == DType::F32) // ONNX 28: x - floor(x / y) * y
    return mapBinary<float, float>(ctx, [](float x, float y) {
      const float r = std::fmod(x, y);
      // A zero takes the divisor's sign; a nonzero remainder of the other
      // sign moves by y (which an infinite y then returns, as specified).
      if (r == 0)
        return std::copysign(0.0f, y);
      return (r < 0) != (y < 0) ? r + y : r;
    });
  if (isIntegerKind(kind)) {
    if (t == DType::I64)
      return integerBinary<int64_t>(ctx, kind);
    if (t == DType::I32)
      return integerBinary<int32_t>(ctx, kind);
    return ctx.error("kind \"" + kind + "\" takes int64 or int32" +
                     (kind == "fmod" || kind == "mod" ? " or float32" : ""));
  }
  if (kind != "and" && kind != "or")
    return unknownKind(ctx, kind);
  if (t != DType::Bool)
    return ctx.error("kind \"" + kind + "\" takes bool");
  if (kind == "and")
    return mapBinary<uint8_t, uint8_t>(
        ctx, [](uint8_t x, uint8_t y) { return uint8_t(x && y); });
  return mapBinary<uint8_t, uint8_t>(
      ctx, [](uint8_t x, uint8_t y) { return uint8_t(x || y); });
}

template <typename T> Status compareAs(KernelContext &ctx, const std::string &k) {
  if (k == "equal")
    return mapBinary<T, uint8_t>(ctx, [](T x, T y) { return uint8_t(x == y); });
  if (k == "less")
    return mapBinary<T, uint8_t>(ctx, [](T x, T y) { return uint8_t(x < y); });
  if (k == "less_equal")
    return mapBinary<T, uint8_t>(ctx,
                                 [](T x, T y) { return uint8_t(x <= y); });
  if (k == "greater")
    return mapBinary<T, uint8_t>(ctx, [](T x, T y) { return uint8_t(x > y); });
  if (k == "greater_equal")
    return mapBinary<T, uint8_t>(ctx,
                                 [](T x, T y) { return uint8_t(x >= y); });
  return unknownKind(ctx, k);
}

Status compareKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(
          0, {DType::F32, DType::I64, DType::I32, DType::Bool});
      !s)
    return s;
  if (Status s = checkSameDTypes(ctx); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::Bool}); !s)
    return s;
  std::string kind;
  if (Status s = ctx.attrStr("kind", &kind); !s)
    return s;
  switch (ctx.input(0).dtype) {
  case DType::F32:
    return compareAs<float>(ctx, kind);
  case DType::I64:
    return compareAs<int64_t>(ctx, kind);
  case DType::I32:
    return compareAs<int32_t>(ctx, kind);
  default:
    if (kind != "equal")
      return ctx.error("kind \"" + kind + "\" does not take bool");
    return compareAs<uint8_t>(ctx, kind);
  }
}

} // namespace

void addMathCoverageKernels(std::vector<KernelImpl> &table) {
  table.push_back({"unary_math", unaryMathKernel});
  table.push_back({"binary_math", binaryMathKernel});
  table.push_back({"compare", compareKernel});
  addMathReduceKernels(table);
}

} // namespace ingot::cpu
