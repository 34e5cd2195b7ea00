//===- CudaTemplates.h - Plan steps as instances of kernel templates -*- C++
//-*-===//
//
// The hand-written kernels of codegen/kernels/cuda (norms, linear, RoPE,
// paged attention, activations, embedding rows) are device-function
// templates; a plan step becomes one `extern "C" __global__` wrapper per
// launch that calls its template with the shapes, dtypes and constants the
// plan knows ahead of time as template arguments and literals. What stays
// dynamic (token and sequence counts, block-table width) arrives as
// arguments the runtime evaluates from the manifest's GpuArg list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/gpu/ElementwiseKernel.h"
#include "dialects/Plan/PlanDialect.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ingot::codegen {

/// One grid dimension: `extent` blocks when operand < 0, else
/// ceil(numel(operand) / divisor).
struct GridDimSpec {
  int64_t operand = -1;
  int64_t divisor = 1;
  int64_t extent = 1;
};

struct TemplateLaunch {
  std::string symbol;
  int64_t blockSize = 256;
  int64_t gridOperand = 0;       // the grid when `grid` is empty
  std::vector<GridDimSpec> grid; // x, y, z
  std::vector<GpuArgSpec> args;
};

/// The wrappers (CUDA C++) and their launches, in launch order.
struct TemplateInstance {
  std::string source;
  std::vector<TemplateLaunch> launches;
};

/// What the plan's steps do not say themselves: the KV cache's geometry.
struct TemplateOptions {
  std::string kvLayout = "block,token,head,dim";
  int64_t kvBlockSize = 16;
};

/// `step` as template instances named `symbol` (and `symbol`_kv), or
/// nullopt with the reason when no template computes it.
std::optional<TemplateInstance>
instantiateCudaTemplate(plan::KernelOp step, const std::string &symbol,
                        const TemplateOptions &options, std::string *whyNot);

} // namespace ingot::codegen
