//===- Unary.cpp - sqrt, neg, exp, erf, tanh, sigmoid, relu ---------------===//
//
// Same-shape elementwise kernels; all in-place (reading and writing element
// i in order is safe when the output is the input).
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/MathF32.h"

#include <cmath>

namespace ingot::cpu {
namespace {

struct SqrtOp {
  static float apply(float x) { return std::sqrt(x); }
};
struct NegOp {
  template <typename T> static T apply(T x) {
    if constexpr (std::is_integral_v<T>)
      return T(0 - std::make_unsigned_t<T>(x)); // wraps at MIN, no UB
    else
      return -x;
  }
};
// exp, erf, sigmoid and tanh run over whole ranges with the vectorised MathF32
// code (the fused interpreter calls the same, so the bits agree).
struct ExpOp {
  static void applyRange(const float *in, float *out, int64_t n) {
    expF32(in, 0.0f, out, n);
  }
};
struct ErfOp {
  static void applyRange(const float *in, float *out, int64_t n) {
    erfF32(in, out, n);
  }
};
struct TanhOp {
  static void applyRange(const float *in, float *out, int64_t n) {
    tanhF32(in, out, n);
  }
};
struct SigmoidOp {
  static void applyRange(const float *in, float *out, int64_t n) {
    sigmoidF32(in, out, n);
  }
};
struct ReluOp {
  // Written so that NaN propagates, as max(0, x) does in ONNX runtimes.
  template <typename T> static T apply(T x) { return x < T(0) ? T(0) : x; }
};

template <typename Op, typename T>
void runUnary(KernelContext &ctx, const T *in, T *out, int64_t n,
              int64_t grain) {
  ctx.parallelFor(n, grain, [&](int64_t b, int64_t e) {
    if constexpr (requires { Op::applyRange(in, out, n); }) {
      Op::applyRange(in + b, out + b, e - b);
    } else {
      for (int64_t i = b; i < e; ++i)
        out[i] = Op::apply(in[i]);
    }
  });
}

/// Checks, output shape, alias handling; returns the input data to read.
Status setupUnary(KernelContext &ctx, std::initializer_list<DType> dtypes,
                  std::vector<uint8_t> &scratch, const void **in) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, dtypes); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  *in = detachIfAliased(x, o.data, x.bytes(), x.shape, o.dtype, scratch);
  return Status::ok();
}

/// Float-only kernels; `grain` reflects the per-element cost.
template <typename Op, int64_t Grain>
Status floatUnaryKernel(KernelContext &ctx) {
  std::vector<uint8_t> scratch;
  const void *in;
  if (Status s = setupUnary(ctx, {DType::F32}, scratch, &in); !s)
    return s;
  runUnary<Op>(ctx, static_cast<const float *>(in), ctx.output(0).as<float>(),
               ctx.input(0).numElements(), Grain);
  return Status::ok();
}

/// neg and relu also take int64/int32.
template <typename Op> Status numericUnaryKernel(KernelContext &ctx) {
  std::vector<uint8_t> scratch;
  const void *in;
  if (Status s =
          setupUnary(ctx, {DType::F32, DType::I64, DType::I32}, scratch, &in);
      !s)
    return s;
  int64_t n = ctx.input(0).numElements();
  switch (ctx.input(0).dtype) {
  case DType::F32:
    runUnary<Op>(ctx, static_cast<const float *>(in), ctx.output(0).as<float>(),
                 n, kElementwiseGrain);
    break;
  case DType::I64:
    runUnary<Op>(ctx, static_cast<const int64_t *>(in),
                 ctx.output(0).as<int64_t>(), n, kElementwiseGrain);
    break;
  default:
    runUnary<Op>(ctx, static_cast<const int32_t *>(in),
                 ctx.output(0).as<int32_t>(), n, kElementwiseGrain);
    break;
  }
  return Status::ok();
}

// Transcendentals cost ~10-20 ns each: parallelise from a few thousand.
constexpr int64_t kTranscendentalGrain = 4096;

} // namespace

void addUnaryKernels(std::vector<KernelImpl> &table) {
  table.push_back({"sqrt", floatUnaryKernel<SqrtOp, kElementwiseGrain>});
  table.push_back({"neg", numericUnaryKernel<NegOp>});
  table.push_back({"exp", floatUnaryKernel<ExpOp, kTranscendentalGrain>});
  table.push_back({"erf", floatUnaryKernel<ErfOp, kTranscendentalGrain>});
  table.push_back({"tanh", floatUnaryKernel<TanhOp, kTranscendentalGrain>});
  table.push_back(
      {"sigmoid", floatUnaryKernel<SigmoidOp, kTranscendentalGrain>});
  table.push_back({"relu", numericUnaryKernel<ReluOp>});
}

} // namespace ingot::cpu
