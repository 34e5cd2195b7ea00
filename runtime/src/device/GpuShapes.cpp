//===- GpuShapes.cpp - Output shapes of the steps a GPU runs --------------===//
//
// Every rule mirrors the CPU kernel's setOutputShape call (runtime/src/cpu):
// elementwise kernels broadcast, norms and activations keep their input's
// shape, linear and attention replace the last dim by the width the plan
// compiled (their output buffer's static last dim).
//
//===----------------------------------------------------------------------===//
#include "device/GpuShapes.h"

#include <set>

namespace ingot::gpu {
namespace {

const std::set<std::string> &elementwiseKernels() {
  static const std::set<std::string> names = {"fused_elementwise",
                                              "add",
                                              "sub",
                                              "mul",
                                              "div",
                                              "pow",
                                              "sqrt",
                                              "neg",
                                              "exp",
                                              "erf",
                                              "tanh",
                                              "sigmoid",
                                              "relu",
                                              "unary_math",
                                              "binary_math"};
  return names;
}

const std::set<std::string> &sameShapeKernels() {
  static const std::set<std::string> names = {"rms_norm", "add_rms_norm",
                                              "gelu", "rope", "cast"};
  return names;
}

int64_t attrInt(const Step &step, const std::string &name, int64_t fallback) {
  for (const Attr &a : step.attrs)
    if (a.name == name && a.kind == Attr::Kind::Int)
      return a.i;
  return fallback;
}

/// The first input's shape with its last dim replaced by `last`.
bool withLast(const std::vector<shape::Shape> &inputs, int64_t last,
              shape::Shape *out, std::string *error) {
  if (inputs.empty() || inputs[0].empty()) {
    *error = "its first input has no dims";
    return false;
  }
  *out = inputs[0];
  out->back() = last;
  return true;
}

bool rule(const Manifest &m, const Step &step,
          const std::vector<shape::Shape> &inputs, shape::Shape *out,
          std::string *error) {
  const std::string &k = step.kernel;
  const Buffer &ob = m.buffers[step.outputs[0]];
  if (elementwiseKernels().count(k)) {
    std::vector<shape::Shape> given;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (step.inputs[i] != kNoBuffer)
        given.push_back(inputs[i]);
    return shape::broadcast(given, out, error);
  }
  if (sameShapeKernels().count(k)) {
    *out = inputs[0];
    return true;
  }
  if (k == "silu_mul") {
    const bool fused = inputs.size() < 2 || step.inputs[1] == kNoBuffer;
    return withLast(inputs, fused ? inputs[0].back() / 2 : inputs[0].back(),
                    out, error);
  }
  if (k == "linear")
    return withLast(inputs, ob.maxShape.back(), out, error);
  if (k == "gather")
    return shape::gather(inputs[0], inputs[1], attrInt(step, "axis", 0), out,
                         error);
  if (k == "paged_attention" || k == "rope_paged_attention") {
    if (inputs[0].size() != 2) {
      *error = "q must be [tokens, width]";
      return false;
    }
    *out = {inputs[0][0], ob.maxShape.back()};
    return true;
  }
  *error = "no GPU shape rule for this kernel";
  return false;
}

} // namespace

uint64_t byteSize(const shape::Shape &s, DType t) {
  uint64_t n = dtypeSize(t);
  for (int64_t d : s)
    n *= static_cast<uint64_t>(d);
  return n;
}

bool hasGpuShapeRule(const std::string &kernel) {
  return elementwiseKernels().count(kernel) ||
         sameShapeKernels().count(kernel) || kernel == "silu_mul" ||
         kernel == "linear" || kernel == "gather" ||
         kernel == "paged_attention" || kernel == "rope_paged_attention";
}

Status gpuOutputShapes(const Manifest &m, const Step &step,
                       const std::vector<shape::Shape> &inputs,
                       std::vector<shape::Shape> *outputs) {
  if (step.outputs.empty() || inputs.size() != step.inputs.size())
    return Status::error("has no outputs or a wrong input count");
  shape::Shape out;
  std::string error;
  if (!rule(m, step, inputs, &out, &error))
    return Status::error(error);
  outputs->assign(step.outputs.size(), out); // add_rms_norm: sum and y alike
  for (uint32_t id : step.outputs) {
    const Buffer &b = m.buffers[id];
    if (out.size() != b.rank || byteSize(out, b.dtype) > b.maxBytes)
      return Status::error("output " + shape::toString(out) +
                           " exceeds its compiled bound " +
                           shape::toString(b.maxShape));
  }
  return Status::ok();
}

} // namespace ingot::gpu
