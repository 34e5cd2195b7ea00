//===- TensorKernels.cpp - Coverage kernels (tensor) -------------------===//
#include "cpu/KernelRegistry.h"

namespace ingot::cpu {

void addTensorCoverageKernels(std::vector<KernelInfo> &table) {}

} // namespace ingot::cpu
