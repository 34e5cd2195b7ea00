//===- CudaTemplateStep.h - Reading a plan step for its template -*- C++
//-*-===//
//
// Shared by the per-family instantiators (CudaTemplates*.cpp): the step's
// operands (inputs, then outputs; a `plan.none` input is absent), their
// memref types, its attributes, and the text of a wrapper's parameter list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/cuda/CudaTemplates.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace ingot::codegen::detail {

class TemplateStep {
public:
  explicit TemplateStep(plan::KernelOp op);

  plan::KernelOp op() const { return op_; }
  size_t numInputs() const { return numInputs_; }
  size_t numOperands() const { return operands_.size(); }
  /// Output `i` as an operand index.
  int64_t output(size_t i) const { return int64_t(numInputs_ + i); }
  bool present(size_t i) const;
  mlir::MemRefType type(size_t i) const;
  /// Static dim `axis` of operand `i`, or -1 when dynamic or not a memref.
  int64_t dim(size_t i, size_t axis) const;
  /// "float", "ingot_k::Bf16", "ingot_k::F16", "ingot_k::i64",
  /// "ingot_k::i32"; empty for any other element type, and for quantised
  /// weights (a plan.param with `quant`), which no template reads yet.
  std::string elementType(size_t i) const;

  /// The block format of a quantised weight operand ("q8", "q4", "q4m",
  /// "f8") and its group size; "" for any other operand.
  std::string quantFormat(size_t i, int64_t *group) const;
  /// Whether operands `i` and `j` are arena slices the memory plan let
  /// overlap (an in-place step).
  bool overlaps(size_t i, size_t j) const;

  int64_t intAttr(const char *name, int64_t fallback) const;
  double floatAttr(const char *name, double fallback) const;
  std::string strAttr(const char *name, const std::string &fallback) const;

private:
  mutable plan::KernelOp op_; // MLIR op handles are not const-correct
  std::vector<mlir::Value> operands_;
  size_t numInputs_ = 0;
};

/// A float as an exact C++ literal ("0x1.99999ap-4f").
std::string floatLiteral(double v);
/// A double as an exact C++ literal ("0x1.999999999999ap-4").
std::string doubleLiteral(double v);

/// `extern "C" __global__ void __launch_bounds__(block) symbol(params)`
/// opening a wrapper whose body follows.
std::string wrapperHead(const std::string &symbol, int64_t block,
                        const std::vector<std::string> &params);

/// "const T *pN" (inputs) or "T *pN" (outputs) for operand `i` (T is u8
/// for a quantised weight's blocks), and the pointer argument passing it.
std::string pointerParam(const TemplateStep &s, size_t i);
GpuArgSpec pointerArg(size_t i);

/// Sets *whyNot and gives no instance.
std::optional<TemplateInstance> refuse(std::string *whyNot,
                                       const std::string &why);

/// The linear's `activation` as activation.cuh numbers it (0 none, 1 relu,
/// 2 silu, 3 gelu, 4 gelu_tanh); -1 for any other.
int64_t activationIndex(const TemplateStep &s);

/// Smallest multiple of 32 at least `n`, capped at `cap`.
int64_t warpMultiple(int64_t n, int64_t cap);

std::optional<TemplateInstance> instantiateNorm(const TemplateStep &s,
                                                const std::string &symbol,
                                                std::string *whyNot);
std::optional<TemplateInstance> instantiateActivation(const TemplateStep &s,
                                                      const std::string &symbol,
                                                      std::string *whyNot);
std::optional<TemplateInstance> instantiateGather(const TemplateStep &s,
                                                  const std::string &symbol,
                                                  std::string *whyNot);
std::optional<TemplateInstance> instantiateCast(const TemplateStep &s,
                                                const std::string &symbol,
                                                std::string *whyNot);
std::optional<TemplateInstance>
instantiateQuantLinear(const TemplateStep &s, const std::string &symbol,
                       std::string *whyNot);
std::optional<TemplateInstance>
instantiateQuantGather(const TemplateStep &s, const std::string &symbol,
                       std::string *whyNot);
std::optional<TemplateInstance> instantiateLinear(const TemplateStep &s,
                                                  const std::string &symbol,
                                                  std::string *whyNot);
std::optional<TemplateInstance> instantiateRope(const TemplateStep &s,
                                                const std::string &symbol,
                                                std::string *whyNot);
std::optional<TemplateInstance>
instantiateAttention(const TemplateStep &s, const std::string &symbol,
                     const TemplateOptions &options, std::string *whyNot);

} // namespace ingot::codegen::detail
