//===- ManifestValidateGpu.cpp - GPU kernel tables and code sections ------===//
//
// The runtime launches exactly what a GPU target's table says, so a table
// edited to name a step, operand or axis that does not exist, or a launch
// no GPU accepts, is refused here rather than becoming an out-of-bounds
// read on the device.
//
//===----------------------------------------------------------------------===//
#include "ManifestValidate.h"

#include "ingot/ArtifactFormat.h"

#include <cctype>
#include <set>

namespace ingot::format {
namespace {

constexpr uint32_t kMaxBlockThreads = 1024;  // every CUDA/HIP GPU
constexpr uint32_t kMaxSharedBytes = 232448; // 227 KiB, sm_90's opt-in

/// Target and architecture names become file names (inspect
/// --extract-code): letters, digits and '_' only.
bool isPlainName(const std::string &s) {
  if (s.empty() || s.size() > 64)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

/// The buffer of operand `k`: the step's inputs, then its outputs.
uint32_t operandBuffer(const Step &s, uint32_t k) {
  return k < s.inputs.size() ? s.inputs[k] : s.outputs[k - s.inputs.size()];
}

Status checkArg(const Manifest &m, const Step &s, const GpuArg &a,
                const std::string &what) {
  if (a.kind == GpuArg::Kind::KvKeys || a.kind == GpuArg::Kind::KvValues) {
    if (!m.hasLlm || int64_t(a.axis) >= m.llm.numLayers)
      return Status::error(what + " names the KV cache of layer " +
                           std::to_string(a.axis) + ", which the model lacks");
    return Status::ok();
  }
  const size_t operands = s.inputs.size() + s.outputs.size();
  if (a.operand >= operands)
    return Status::error(what + " names operand " + std::to_string(a.operand) +
                         " of " + std::to_string(operands));
  const uint32_t id = operandBuffer(s, a.operand);
  if (id == kNoBuffer)
    return Status::error(what + " names an absent operand");
  uint32_t rank = m.buffers[id].rank;
  if (a.kind == GpuArg::Kind::BroadcastStride) {
    if (a.operand >= s.inputs.size() || s.outputs.empty())
      return Status::error(what + ": a broadcast stride is of an input");
    rank = m.buffers[s.outputs[0]].rank;
  }
  if ((a.kind == GpuArg::Kind::Dim ||
       a.kind == GpuArg::Kind::BroadcastStride) &&
      a.axis >= rank)
    return Status::error(what + " names axis " + std::to_string(a.axis) +
                         " of a rank-" + std::to_string(rank) + " operand");
  return Status::ok();
}

Status checkKernel(const Manifest &m, const GpuTarget &t, size_t i,
                   uint32_t previousStep) {
  const GpuKernel &k = t.kernels[i];
  const std::string what = "GPU target '" + t.name + "' kernel " +
                           std::to_string(i) + " '" + k.symbol + "'";
  if (k.symbol.empty())
    return Status::error(what + " has no symbol");
  if (k.step >= m.steps.size())
    return Status::error(what + " is for step " + std::to_string(k.step) +
                         " of " + std::to_string(m.steps.size()));
  if (i > 0 && k.step < previousStep)
    return Status::error(what + ": steps must not descend");
  if (k.blockX == 0 || k.blockX > kMaxBlockThreads)
    return Status::error(what + " has " + std::to_string(k.blockX) +
                         " threads per block (expected 1 to 1024)");
  if (k.sharedBytes > kMaxSharedBytes)
    return Status::error(what + " asks for " + std::to_string(k.sharedBytes) +
                         " bytes of shared memory");
  const Step &s = m.steps[k.step];
  const std::string where = what + " (" + describeStep(m, k.step) + ")";
  const size_t operands = s.inputs.size() + s.outputs.size();
  if (k.gridOperand >= operands || operandBuffer(s, k.gridOperand) == kNoBuffer)
    return Status::error(where + " sizes its grid by a missing operand");
  if (k.grid.size() > 3)
    return Status::error(where + " has a grid of more than 3 dimensions");
  for (const GpuGridDim &d : k.grid) {
    const bool constant = d.operand == GpuGridDim::kGridConstant;
    if (constant ? d.extent == 0
                 : d.operand >= operands || d.divisor == 0 ||
                       operandBuffer(s, d.operand) == kNoBuffer)
      return Status::error(where + " has a grid dimension of no blocks, "
                                   "or sized by a missing operand");
  }
  for (size_t a = 0; a < k.args.size(); ++a)
    if (Status st =
            checkArg(m, s, k.args[a], where + " argument " + std::to_string(a));
        !st)
      return st;
  return Status::ok();
}

} // namespace

Status validateGpuTargets(const Manifest &m) {
  std::set<std::string> names;
  for (const GpuTarget &t : m.gpuTargets) {
    if (!isPlainName(t.name) || !names.insert(t.name).second)
      return Status::error("a GPU target is unnamed, listed twice, or named "
                           "with other than letters, digits and '_'");
    if (t.objects.empty())
      return Status::error("GPU target '" + t.name + "' has no code objects");
    for (const CodeObject &c : t.objects)
      if (!isPlainName(c.arch) || c.bytes == 0)
        return Status::error("GPU target '" + t.name +
                             "' has an empty code object or one whose arch "
                             "is not letters, digits and '_'");
    for (size_t i = 0; i < t.kernels.size(); ++i)
      if (Status s = checkKernel(m, t, i, i ? t.kernels[i - 1].step : 0); !s)
        return s;
  }
  return Status::ok();
}

Status validateCodeSections(
    const Manifest &m,
    const std::vector<std::pair<std::string, uint64_t>> &sections) {
  for (const auto &[name, size] : sections) {
    bool known = false;
    for (const std::string &t : m.targets)
      known |= t == name;
    for (const GpuTarget &t : m.gpuTargets)
      known |= t.name == name;
    if (!known)
      return Status::error("code section for target '" + name +
                           "', which the manifest does not list");
  }
  for (const GpuTarget &t : m.gpuTargets) {
    const uint64_t *size = nullptr;
    for (const auto &[name, bytes] : sections)
      if (name == t.name)
        size = &bytes;
    if (!size)
      return Status::error("GPU target '" + t.name + "' has no code section");
    for (const CodeObject &c : t.objects)
      if (c.offset > *size || c.bytes > *size - c.offset)
        return Status::error("GPU target '" + t.name + "' code object for " +
                             c.arch + " lies outside its code section");
  }
  return Status::ok();
}

} // namespace ingot::format
