//===- CudaTargets.cpp - The CUDA architectures ingot builds for ----------===//
//
// PTX 8.0 (CUDA 12.0) is the floor for every architecture: older PTX does
// not name sm_90, and one floor keeps the kept PTX loadable by any CUDA 12
// driver. sm_100 and sm_120 first appear in PTX 8.6 and 8.7.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTargets.h"

#include <cstdlib>
#include <utility>

namespace ingot::codegen {
namespace {

const std::vector<std::pair<std::string, std::string>> &archTable() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"sm_80", "+ptx80"}, {"sm_86", "+ptx80"},  {"sm_89", "+ptx80"},
      {"sm_90", "+ptx80"}, {"sm_100", "+ptx86"}, {"sm_120", "+ptx87"},
  };
  return table;
}

} // namespace

std::string ptxFeaturesFor(const std::string &chip) {
  for (const auto &[arch, features] : archTable())
    if (arch == chip)
      return features;
  return "";
}

std::string knownCudaArchs() {
  std::string list;
  for (const auto &entry : archTable())
    list += (list.empty() ? "" : ", ") + entry.first;
  return list;
}

std::vector<std::string> defaultCudaArchs() { return {"sm_80", "sm_90"}; }

std::string cudaToolkitRoot() {
  const char *home = std::getenv("CUDA_HOME");
  return home && *home ? home : "/usr/local/cuda";
}

} // namespace ingot::codegen
