//===- CudaTargets.h - The CUDA architectures ingot builds for --*- C++ -*-===//
#pragma once

#include <string>
#include <vector>

namespace ingot::codegen {

/// The gpu.module holding every generated CUDA kernel, and the attribute on
/// each plan step that one of them computes.
inline constexpr const char *kCudaModuleName = "ingot_cuda";
inline constexpr const char *kCudaKernelAttr = "ingot.cuda_kernel";
/// CUDA C++ of a step's template instances (ingot-instantiate-cuda-templates).
inline constexpr const char *kCudaSourceAttr = "ingot.cuda_source";

/// The NVPTX features (PTX ISA version) to build `chip` with: the oldest
/// PTX that supports it, so the PTX kept for JIT loads on the most drivers.
/// Empty for an architecture ingot does not build for.
std::string ptxFeaturesFor(const std::string &chip);

/// "sm_80, sm_86, ..." for messages.
std::string knownCudaArchs();

/// `cuda` alone: the data-centre GPUs most deployments run.
std::vector<std::string> defaultCudaArchs();

/// The CUDA toolkit a compile for a CUDA target uses (libdevice for the
/// math functions, nvJitLink for cubins): $CUDA_HOME, else /usr/local/cuda.
std::string cudaToolkitRoot();

} // namespace ingot::codegen
