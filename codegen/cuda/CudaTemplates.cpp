//===- CudaTemplates.cpp - Plan steps as instances of kernel templates ----===//
#include "codegen/cuda/CudaTemplates.h"
#include "codegen/cuda/CudaTemplateStep.h"

namespace ingot::codegen {

std::optional<TemplateInstance>
instantiateCudaTemplate(plan::KernelOp step, const std::string &symbol,
                        const TemplateOptions &options, std::string *whyNot) {
  using namespace detail;
  const TemplateStep s(step);
  const llvm::StringRef k = step.getKernel();
  if (k == "rms_norm" || k == "add_rms_norm")
    return instantiateNorm(s, symbol, whyNot);
  if (k == "silu_mul" || k == "gelu")
    return instantiateActivation(s, symbol, whyNot);
  if (k == "gather")
    return instantiateGather(s, symbol, whyNot);
  if (k == "linear")
    return instantiateLinear(s, symbol, whyNot);
  if (k == "rope")
    return instantiateRope(s, symbol, whyNot);
  if (k == "paged_attention" || k == "rope_paged_attention")
    return instantiateAttention(s, symbol, options, whyNot);
  *whyNot = "no CUDA kernel template for '" + k.str() + "'";
  return std::nullopt;
}

} // namespace ingot::codegen
