//===- TensorKernels.h - Helpers of the tensor-family kernels ---*- C++ -*-===//
//
// Private to TensorKernels.cpp and the Tensor*/Conv*/Pool* files beside it:
// their registration hooks and small index helpers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelUtil.h"

namespace ingot::cpu {

void addTensorSliceKernels(std::vector<KernelImpl> &table);
void addTensorIndexKernels(std::vector<KernelImpl> &table);
void addGatherNDKernels(std::vector<KernelImpl> &table);
void addConvKernels(std::vector<KernelImpl> &table);
void addConvTransposeKernels(std::vector<KernelImpl> &table);
void addLstmKernels(std::vector<KernelImpl> &table);
void addGruKernels(std::vector<KernelImpl> &table);
void addPoolKernels(std::vector<KernelImpl> &table);
void addResizeKernels(std::vector<KernelImpl> &table);
void addControlFlowKernels(std::vector<KernelImpl> &table);
void addNonMaxSuppressionKernels(std::vector<KernelImpl> &table);

/// Row-major element strides of `s`.
inline std::vector<int64_t> stridesOf(const shape::Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    st[i - 1] = st[i] * s[i];
  return st;
}

/// Advances a row-major multi-index over `dims`; false after the last one.
inline bool nextIndex(std::vector<int64_t> &idx, const shape::Shape &dims) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < dims[d])
      return true;
    idx[d] = 0;
  }
  return false;
}

/// Reads element `i` of an integer (i64/i32) or f32 input as int64.
inline int64_t readInt(const KernelInput &in, int64_t i) {
  switch (in.dtype) {
  case DType::I64:
    return in.as<int64_t>()[i];
  case DType::I32:
    return in.as<int32_t>()[i];
  case DType::F32:
    return int64_t(in.as<float>()[i]);
  default:
    return 0;
  }
}

/// Output size and begin padding of one spatial dim of a window op; shared
/// rule with the compiler (ShapeInferenceTensor.cpp).
inline int64_t windowOut(int64_t in, int64_t k, int64_t stride,
                         int64_t dilation, int64_t *padBegin, int64_t *padEnd,
                         const std::string &autoPad, bool ceilMode) {
  int64_t ek = (k - 1) * dilation + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    int64_t out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + ek - in);
    *padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    *padEnd = total - *padBegin;
    return out;
  }
  if (autoPad == "VALID")
    *padBegin = *padEnd = 0;
  int64_t span = in + *padBegin + *padEnd - ek;
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + *padBegin)
    --out;
  return out;
}

} // namespace ingot::cpu
