//===- Conversion.cpp - cast, shape, constant_of_shape, trilu -------------===//

#include "cpu/KernelUtil.h"
#include "ingot/MiniFloat.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace ingot::cpu {
namespace {

// Element access by dtype. Integers (and bool) travel as int64, floats as
// double, so each conversion rounds at most once on the way to f32 and
// narrower integers wrap like a C cast of the int64 value.
struct Value {
  bool isFloat;
  int64_t i;
  double f;
  /// `i` holds uint64 bits: converts to floats as unsigned, to integers
  /// modulo 2^64 like a C cast.
  bool u64 = false;
};

Value load(DType t, const void *p, int64_t idx) {
  switch (t) {
  case DType::F32:
    return {true, 0, static_cast<const float *>(p)[idx]};
  case DType::F64:
    return {true, 0, static_cast<const double *>(p)[idx]};
  case DType::F16:
    return {true, 0, halfToFloat(static_cast<const uint16_t *>(p)[idx])};
  case DType::BF16:
    return {true, 0, bf16ToFloat(static_cast<const uint16_t *>(p)[idx])};
  case DType::I64:
    return {false, static_cast<const int64_t *>(p)[idx], 0};
  case DType::I32:
    return {false, static_cast<const int32_t *>(p)[idx], 0};
  case DType::I8:
    return {false, static_cast<const int8_t *>(p)[idx], 0};
  case DType::U8:
    return {false, static_cast<const uint8_t *>(p)[idx], 0};
  case DType::I16:
    return {false, static_cast<const int16_t *>(p)[idx], 0};
  case DType::U16:
    return {false, static_cast<const uint16_t *>(p)[idx], 0};
  case DType::U32:
    return {false, static_cast<const uint32_t *>(p)[idx], 0};
  case DType::U64:
    return {false, int64_t(static_cast<const uint64_t *>(p)[idx]), 0, true};
  case DType::Bool:
    return {false, static_cast<const uint8_t *>(p)[idx] ? 1 : 0, 0};
  default:
    break;
  }
  const uint8_t bits = static_cast<const uint8_t *>(p)[idx];
  if (isMiniFloat(t))
    return {true, 0, miniFloatToDouble(t, bits)};
  if (isNarrowInt(t))
    return {false, narrowIntValue(t, bits), 0};
  return {false, 0, 0};
}

/// float -> integer truncates toward zero; NaN and out-of-range values give
/// INT64_MIN (what x86 conversions produce) instead of undefined behaviour.
int64_t truncToInt(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

/// A value as f32 / f64, rounded once.
float asFloat(const Value &v) {
  if (v.isFloat)
    return float(v.f);
  return v.u64 ? float(uint64_t(v.i)) : float(v.i);
}
double asDouble(const Value &v) {
  if (v.isFloat)
    return v.f;
  return v.u64 ? double(uint64_t(v.i)) : double(v.i);
}

/// `saturate`: ONNX Cast's attribute, for the float8 targets.
void store(DType t, void *p, int64_t idx, const Value &v, bool saturate) {
  if (isMiniFloat(t)) {
    static_cast<uint8_t *>(p)[idx] =
        doubleToMiniFloat(t, asDouble(v), saturate);
    return;
  }
  if (isNarrowInt(t)) {
    static_cast<uint8_t *>(p)[idx] =
        v.isFloat ? narrowIntFromDouble(t, v.f) : narrowIntWrap(t, v.i);
    return;
  }
  switch (t) {
  case DType::F32:
    static_cast<float *>(p)[idx] = asFloat(v);
    return;
  case DType::F64:
    static_cast<double *>(p)[idx] = asDouble(v);
    return;
  case DType::F16:
    static_cast<uint16_t *>(p)[idx] = floatToHalf(asFloat(v));
    return;
  case DType::BF16:
    static_cast<uint16_t *>(p)[idx] = floatToBf16(asFloat(v));
    return;
  case DType::Bool:
    static_cast<uint8_t *>(p)[idx] = v.isFloat ? v.f != 0.0 : v.i != 0;
    return;
  default:
    break;
  }
  int64_t i = v.isFloat ? truncToInt(v.f) : v.i;
  switch (t) {
  case DType::I64:
    static_cast<int64_t *>(p)[idx] = i;
    return;
  case DType::I32:
    static_cast<int32_t *>(p)[idx] = int32_t(uint32_t(i));
    return;
  case DType::I8:
    static_cast<int8_t *>(p)[idx] = int8_t(uint8_t(i));
    return;
  case DType::U8:
    static_cast<uint8_t *>(p)[idx] = uint8_t(i);
    return;
  case DType::I16:
    static_cast<int16_t *>(p)[idx] = int16_t(uint16_t(i));
    return;
  case DType::U16:
    static_cast<uint16_t *>(p)[idx] = uint16_t(i);
    return;
  case DType::U32:
    static_cast<uint32_t *>(p)[idx] = uint32_t(i);
    return;
  case DType::U64:
    static_cast<uint64_t *>(p)[idx] = v.isFloat &&
                                              v.f >= 9223372036854775808.0 &&
                                              v.f < 18446744073709551616.0
                                          ? uint64_t(v.f)
                                          : uint64_t(i);
    return;
  default:
    return;
  }
}

/// One element of a typed conversion, with the generic path's results:
/// floats to integers truncate (via int32 when in its range, which
/// vectorises) and wrap to the target width; the rest is a C cast.
template <typename From, typename To> To convertOne(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> &&
                sizeof(To) <= 4) {
    // Outside int32 (and NaN) the int64 path gives INT64_MIN, whose low
    // 32 bits are 0: one select instead of a branch.
    const bool in = v > From(-2147483648.0) && v < From(2147483648.0);
    return To(std::make_unsigned_t<To>(int32_t(in ? v : From(0))));
  } else if constexpr (std::is_floating_point_v<From> &&
                       std::is_integral_v<To>) {
    using U = std::make_unsigned_t<To>;
    if (v > From(-2147483648.0) && v < From(2147483648.0))
      return To(U(int32_t(v)));
    if constexpr (std::is_same_v<To, uint64_t>)
      if (v >= From(9223372036854775808.0) && v < From(18446744073709551616.0))
        return To(v);
    return To(U(truncToInt(double(v))));
  } else {
    return To(v);
  }
}

using RangeFn = void (*)(const void *, void *, int64_t, int64_t);

template <typename From, typename To>
void convertRange(const void *in, void *out, int64_t b, int64_t e) {
  const From *x = static_cast<const From *>(in);
  To *y = static_cast<To *>(out);
  for (int64_t i = b; i < e; ++i)
    y[i] = convertOne<From, To>(x[i]);
}

// The element type of each plain numeric DType (not bool, f16, bf16).
// clang-format off
#define INGOT_PLAIN_DTYPES(X)                                                  \
  X(F32, float) X(F64, double) X(I64, int64_t) X(I32, int32_t)                 \
  X(I16, int16_t) X(I8, int8_t) X(U8, uint8_t) X(U16, uint16_t)                \
  X(U32, uint32_t) X(U64, uint64_t)
// clang-format on

template <typename From> RangeFn rangeTo(DType to) {
#define INGOT_CASE(D, T)                                                       \
  case DType::D:                                                               \
    return convertRange<From, T>;
  switch (to) {
    INGOT_PLAIN_DTYPES(INGOT_CASE)
  default:
    return nullptr;
  }
#undef INGOT_CASE
}

/// Bools (one byte, any nonzero true) to a plain numeric type as 0 or 1:
/// one-hot encodings cast whole [tokens, vocab] masks to float.
template <typename To>
void boolRange(const void *in, void *out, int64_t b, int64_t e) {
  const uint8_t *x = static_cast<const uint8_t *>(in);
  To *y = static_cast<To *>(out);
  for (int64_t i = b; i < e; ++i)
    y[i] = To(x[i] != 0);
}

/// A typed loop for `from` -> `to`, or null where the generic element
/// path is needed (to bool, and the 16-bit floats).
RangeFn typedConversion(DType from, DType to) {
#define INGOT_BOOL_CASE(D, T)                                                  \
  case DType::D:                                                               \
    return boolRange<T>;
  if (from == DType::Bool) {
    switch (to) {
      INGOT_PLAIN_DTYPES(INGOT_BOOL_CASE)
    default:
      return nullptr;
    }
  }
#undef INGOT_BOOL_CASE
#define INGOT_CASE(D, T)                                                       \
  case DType::D:                                                               \
    return rangeTo<T>(to);
  switch (from) {
    INGOT_PLAIN_DTYPES(INGOT_CASE)
  default:
    return nullptr;
  }
#undef INGOT_CASE
}
#undef INGOT_PLAIN_DTYPES

Status castKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  int64_t saturate;
  if (Status s = ctx.attrInt("saturate", &saturate, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  const int64_t n = x.numElements();
  if (x.dtype == o.dtype) {
    if (o.data != x.data && n)
      std::memmove(o.data, x.data, x.bytes());
    return Status::ok();
  }
  std::vector<uint8_t> scratch;
  const void *in = x.data;
  if (rangesOverlap(in, x.bytes(), o.data, n * dtypeSize(o.dtype))) {
    scratch.assign(x.as<uint8_t>(), x.as<uint8_t>() + x.bytes());
    in = scratch.data();
  }
  if (RangeFn typed = typedConversion(x.dtype, o.dtype)) {
    ctx.parallelFor(n, kElementwiseGrain,
                    [&](int64_t b, int64_t e) { typed(in, o.data, b, e); });
    return Status::ok();
  }
  ctx.parallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      store(o.dtype, o.data, i, load(x.dtype, in, i), saturate != 0);
  });
  return Status::ok();
}

Status shapeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::I64}); !s)
    return s;
  int64_t start, end, b, e;
  if (Status s = ctx.attrInt("start", &start, 0); !s)
    return s;
  if (Status s = ctx.attrInt("end", &end, std::numeric_limits<int64_t>::max());
      !s)
    return s;
  const shape::Shape &in = ctx.input(0).shape;
  shape::shapeOpRange(in.size(), start, end, &b, &e);
  if (Status s = ctx.setOutputShape(0, {e - b}); !s)
    return s;
  for (int64_t i = b; i < e; ++i)
    ctx.output(0).as<int64_t>()[i - b] = in[i];
  return Status::ok();
}

Status constantOfShapeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::I64}); !s)
    return s;
  std::vector<int64_t> dims;
  if (Status s = readIndexVector(ctx, 0, &dims); !s)
    return s;
  for (int64_t d : dims)
    if (d < 0)
      return ctx.error("negative dim in shape " + shape::toString(dims));
  double value;
  if (Status s = ctx.attrFloat("value", &value, 0.0); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, dims); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  const size_t es = dtypeSize(o.dtype);
  uint8_t pattern[8];
  store(o.dtype, pattern, 0, Value{true, 0, value}, /*saturate=*/true);
  const int64_t n = o.numElements();
  auto *out = static_cast<uint8_t *>(o.data);
  ctx.parallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      std::memcpy(out + i * es, pattern, es);
  });
  return Status::ok();
}

Status triluKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 2, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  if (x.shape.size() < 2)
    return ctx.error("input must have rank >= 2, got " +
                     shape::toString(x.shape));
  int64_t k = 0, upper;
  if (ctx.hasInput(1)) {
    std::vector<int64_t> kv;
    if (Status s = readIndexVector(ctx, 1, &kv); !s)
      return s;
    if (kv.size() != 1)
      return ctx.error("k must hold one value, got " +
                       std::to_string(kv.size()));
    k = kv[0];
  }
  if (Status s = ctx.attrInt("upper", &upper, 1); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  const int64_t mats = dimProduct(x.shape, 0, x.shape.size() - 2);
  const size_t es = dtypeSize(x.dtype);
  std::vector<uint8_t> scratch;
  const auto *in = static_cast<const uint8_t *>(
      detachIfAliased(x, o.data, x.bytes(), x.shape, o.dtype, scratch));
  auto *out = static_cast<uint8_t *>(o.data);
  // Row i keeps columns j with j - i >= k (upper) or j - i <= k (lower);
  // all-zero bytes are zero for every dtype.
  ctx.parallelFor(
      mats * rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(cols, 1)),
      [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t i = t % rows;
          const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
          const int64_t hi =
              upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
          uint8_t *row = out + t * cols * es;
          const uint8_t *src = in + t * cols * es;
          std::memset(row, 0, lo * es);
          if (hi > lo && row != src)
            std::memmove(row + lo * es, src + lo * es, (hi - lo) * es);
          std::memset(row + hi * es, 0, (cols - hi) * es);
        }
      });
  return Status::ok();
}

} // namespace

void addConversionKernels(std::vector<KernelImpl> &table) {
  table.push_back({"cast", castKernel});
  table.push_back({"shape", shapeKernel});
  table.push_back({"constant_of_shape", constantOfShapeKernel});
  table.push_back({"trilu", triluKernel});
}

} // namespace ingot::cpu
