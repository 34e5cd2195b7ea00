//===- LinearQuant.h - Linear on quantised weights --------------*- C++ -*-===//
//
// y = x·Wᵀ with W in a block format of ingot/Quant.h is weight-only
// quantisation (as TensorRT-LLM's W8A16/W4A16): x stays f32 and the weights
// are dequantised in registers, N at a time (the ISA's f32 lanes: 8 for
// AVX2, 16 for AVX-512), to exactly dequantizeRow's values (d·q,
// d·(q - 8), d·e4m3, fma(q, d, m) for q4m), then multiplied with x. Each
// output element is one chain of N lanes over every group's first gs/N*N
// values plus one scalar chain over the rest, the lanes reduced in one
// fixed order, then + bias. Tiles of x rows and weight rows only choose
// which chains run side by side, so a row's result does not depend on the
// batch (batch invariance); the portable kernel of the same N gives the
// same bits. Decode reads 1/4 (int8) to 1/7 (int4) of the f32 bytes.
//
// Why x is not quantised to int8 as llama.cpp does for its Q8_0/Q4_x dot
// products: on SmolLM2-135M that alone moved the float64 reference's
// logits by 22% (weights kept exact), against 6% for int8 weights alone,
// and greedy text went wrong.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/Gemm.h"
#include "ingot/DType.h"

#include <cstdint>

namespace ingot::cpu {

/// What one call computes: y[r, n0:n1) for rows [row0, row0 + m) of x.
struct QuantLinearArgs {
  int64_t m = 0, n = 0, k = 0;
  int64_t row0 = 0;            // first row of x
  const float *x = nullptr;    // rows of k f32 values, from row 0
  const void *w = nullptr;     // [n] rows of quantRowBytes bytes
  DType wType = DType::Q8;     // Q8, Q4, Q4M or F8E4M3
  int64_t group = 32;
  const float *bias = nullptr; // n values or nullptr
  float *y = nullptr;          // rows of n values, for row row0 on
};

using QuantLinearFn = void (*)(const QuantLinearArgs &a, int64_t n0,
                               int64_t n1);

struct QuantLinearKernels {
  QuantLinearFn nk;
  const char *isa;
  int lanes; // f32 lanes of each output's vector chain
};

/// The portable kernel with `lanes` 8 or 16: the same bits as the ISA
/// kernel of that width.
const QuantLinearKernels &genericQuantLinearKernels(int lanes = 8);
const QuantLinearKernels &avx2QuantLinearKernels();   // AVX2 + FMA + F16C
const QuantLinearKernels &avx512QuantLinearKernels(); // AVX-512F/BW/VL
/// The best set this CPU supports (INGOT_GEMM_ISA caps it as for f32).
const QuantLinearKernels &bestQuantLinearKernels();
/// The ISA that set is for: AVX-512 with BW and VL, AVX2 with FMA and F16C,
/// or generic.
GemmIsa bestQuantIsa();

/// Most rows of x one call takes (Linear.cpp passes more in groups).
constexpr int64_t kQuantLinearMaxRows = 32;

} // namespace ingot::cpu
