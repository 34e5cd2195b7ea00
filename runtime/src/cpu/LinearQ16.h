//===- LinearQ16.h - Linear on "q16" weights with int8 activations -*- C++
//-*-=//
//
// y = x·Wᵀ for a q8/q4/q4m weight packed as "q16" (WeightLayout.h): x is
// quantised per row in blocks of 32 to int8 (d = amax / 127, q = x·127 /
// amax rounded to nearest even, as llama.cpp's Q8 activations), and each
// block's dot product is exact integer arithmetic on the stored values:
//
//   isum = Σ qw·qx  (q4: Σ (qw - 8)·qx, as Σ qw·qx - 8·Σ qx;
//                    q8: Σ (qw + 128)·qx - 128·Σ qx where the ISA's
//                    product is unsigned x signed)
//   acc  = fma(float(isum), dw·dx, acc)      one block after another
//   q4m: acc = fma(mw, dx·float(Σ qx), acc)  right after
//   y    = acc (+ bias)
//
// A q8 weight per output channel (one d a row) keeps x's blocks of 32:
//
//   acc  = fma(float(isum), dx, acc)         one x block after another
//   y    = acc·dw (+ bias)
//
// so its inner loop is integer dot products and one multiply-add per 32
// values, while x keeps the accuracy of 32-value scales (SmolLM2 on GPL-3:
// +0.73% perplexity over f32; one scale per row of x instead, +5.1%).
//
// Every vector lane is one output row, so every ISA and the portable
// kernel give the same bits, and a row's result depends on nothing but
// its own x row (batch invariance). This trades the weight-only kernels'
// f32 activations (LinearQuant.h) for ~4x fewer instructions per weight:
// the int8 dot product does 4 multiply-adds per lane per instruction.
// The compiler chooses it with `ingot compile --act-quant int8` (or auto,
// for a Hugging Face or GGUF model compiled for the CPU alone).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"

#include <cstdint>
#include <vector>

namespace ingot::cpu {

/// Rows of x quantised per 32-value block.
struct QuantizedRows {
  int64_t k = 0;
  std::vector<int8_t> q;    // rows of k values
  std::vector<float> d;     // rows of k / 32 scales
  std::vector<int32_t> sum; // rows of k / 32 sums of q
  void resize(int64_t rows, int64_t cols);
};

/// Quantises rows [r0, r1) of x (rows of k values; k a multiple of 32)
/// into `out`, which resize() made big enough.
void quantizeRowsQ8(const float *x, int64_t r0, int64_t r1, QuantizedRows &out);

struct Q16LinearArgs {
  int64_t n = 0, k = 0;
  const QuantizedRows *x = nullptr;
  const uint8_t *w = nullptr; // "q16" bytes of the [n, k] weight
  DType wType = DType::Q4;    // Q8, Q4 or Q4M
  int64_t group = 32;         // 32, or k for a Q8 weight per channel
  const float *bias = nullptr;
  float *y = nullptr; // rows of n values, row 0 = x row 0
};

/// y[r0:r1, n0:n1) with n0, n1 multiples of 16.
using Q16LinearFn = void (*)(const Q16LinearArgs &a, int64_t r0, int64_t r1,
                             int64_t n0, int64_t n1);

/// quantizeRowsQ8's signature: every ISA's quantiser gives its bytes.
using QuantizeRowsFn = void (*)(const float *x, int64_t r0, int64_t r1,
                                QuantizedRows &out);

struct Q16LinearKernels {
  Q16LinearFn nk;
  QuantizeRowsFn quantize;
  const char *isa;
};

const Q16LinearKernels &genericQ16LinearKernels();
const Q16LinearKernels &avx2Q16LinearKernels();       // AVX2 + FMA + F16C
const Q16LinearKernels &avx512VnniQ16LinearKernels(); // + AVX-512 VNNI
/// The best this CPU supports (INGOT_GEMM_ISA caps it as for f32).
const Q16LinearKernels &bestQ16LinearKernels();

} // namespace ingot::cpu
