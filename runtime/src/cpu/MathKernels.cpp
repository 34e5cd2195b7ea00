//===- MathKernels.cpp - Coverage kernels (math) -------------------===//
#include "cpu/KernelRegistry.h"

namespace ingot::cpu {

void addMathCoverageKernels(std::vector<KernelInfo> &table) {}

} // namespace ingot::cpu
