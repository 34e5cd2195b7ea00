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
  int64_t group = 0;
  if (k == "gather" && !s.quantFormat(0, &group).empty())
    return instantiateQuantGather(s, symbol, whyNot);
  if (k == "linear" && !s.quantFormat(1, &group).empty())
    return instantiateQuantLinear(s, symbol, whyNot);
  if (k == "gather")
    return instantiateGather(s, symbol, whyNot);
  if (k == "cast")
    return instantiateCast(s, symbol, whyNot);
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
