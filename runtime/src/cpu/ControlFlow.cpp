//===- ControlFlow.cpp - Steps that choose which steps run ----------------===//
//
// An ingot.if lowers to `skip_unless` (over the then-branch when its
// condition is false), the then-branch, `skip` (over the else-branch), the
// else-branch; each branch ends in `copy` steps into the result buffers.
// The kernels only say how many steps to pass over; the executor moves.
// Skips only go forward, so a plan still runs each step at most once.
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorKernels.h"

namespace ingot::cpu {
namespace {

Status stepsAttr(KernelContext &ctx, int64_t *steps) {
  if (Status s = ctx.attrInt("steps", steps); !s)
    return s;
  if (*steps < 0)
    return ctx.error("steps must be >= 0, got " + std::to_string(*steps));
  return Status::ok();
}

Status skipUnlessKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 0); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::Bool}); !s)
    return s;
  const KernelInput &cond = ctx.input(0);
  if (shape::numElements(cond.shape) != 1)
    return ctx.error("the condition has " +
                     std::to_string(shape::numElements(cond.shape)) +
                     " elements, expected 1");
  int64_t steps;
  if (Status s = stepsAttr(ctx, &steps); !s)
    return s;
  ctx.setSkipSteps(*static_cast<const uint8_t *>(cond.data) ? 0 : steps);
  return Status::ok();
}

Status skipKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(0, 0, 0); !s)
    return s;
  int64_t steps;
  if (Status s = stepsAttr(ctx, &steps); !s)
    return s;
  ctx.setSkipSteps(steps);
  return Status::ok();
}

/// A branch the compiler could not build at the compiled shapes.
Status failKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(0, 0, 0); !s)
    return s;
  std::string message;
  if (Status s = ctx.attrStr("message", &message); !s)
    return s;
  return ctx.error("this run takes a branch that cannot run at the compiled "
                   "input shapes: " +
                   message);
}

Status copyKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  if (Status s = ctx.setOutputShape(0, x.shape); !s)
    return s;
  if (x.bytes())
    std::memcpy(ctx.output(0).data, x.data, x.bytes());
  return Status::ok();
}

} // namespace

void addControlFlowKernels(std::vector<KernelImpl> &table) {
  table.push_back({"skip_unless", skipUnlessKernel});
  table.push_back({"skip", skipKernel});
  table.push_back({"fail", failKernel});
  table.push_back({"copy", copyKernel});
}

} // namespace ingot::cpu
