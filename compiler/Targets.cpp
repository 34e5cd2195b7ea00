//===- Targets.cpp - The --target list of a compile -----------------------===//
#include "compiler/Targets.h"
#include "codegen/cuda/CudaTargets.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace ingot::compiler {
namespace {

int smNumber(const std::string &arch) { return std::atoi(arch.c_str() + 3); }

Status addTarget(const std::string &spec, std::set<std::string> *cuda) {
  if (spec == "cpu")
    return Status::ok();
  if (spec == "cuda") {
    for (const std::string &arch : codegen::defaultCudaArchs())
      cuda->insert(arch);
    return Status::ok();
  }
  const std::string prefix = "cuda:";
  if (spec.rfind(prefix, 0) == 0) {
    const std::string arch = spec.substr(prefix.size());
    if (codegen::ptxFeaturesFor(arch).empty())
      return Status::error("target '" + spec +
                           "': unknown CUDA architecture '" + arch +
                           "'; known: " + codegen::knownCudaArchs());
    cuda->insert(arch);
    return Status::ok();
  }
  return Status::error("target '" + spec +
                       "' is not supported; supported: "
                       "cpu, cuda (= cuda:sm_80,cuda:sm_90), cuda:ARCH with "
                       "ARCH one of " +
                       codegen::knownCudaArchs());
}

} // namespace

Status parseTargets(const std::vector<std::string> &specs, TargetList *out) {
  std::set<std::string> cuda;
  for (const std::string &list : specs) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = std::min(list.find(',', start), list.size());
      const std::string spec = list.substr(start, comma - start);
      if (spec.empty())
        return Status::error("--target '" + list + "': empty target name");
      if (Status s = addTarget(spec, &cuda); !s)
        return s;
      start = comma + 1;
    }
  }
  TargetList result;
  result.cudaArchs.assign(cuda.begin(), cuda.end());
  std::sort(result.cudaArchs.begin(), result.cudaArchs.end(),
            [](const std::string &a, const std::string &b) {
              return smNumber(a) < smNumber(b);
            });
  result.names.push_back("cpu");
  for (const std::string &arch : result.cudaArchs)
    result.names.push_back("cuda:" + arch);
  *out = std::move(result);
  return Status::ok();
}

} // namespace ingot::compiler
