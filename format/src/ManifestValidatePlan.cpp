//===- ManifestValidatePlan.cpp - Steps against their kernels' signatures -===//
//
// A hostile manifest can be edited consistently and resealed; these checks
// make a step the kernel would misread (an operand missing or extra, a
// buffer of a dtype the kernel does not take, an attribute it does not know
// and so would silently ignore) a load error naming the step.
//
//===----------------------------------------------------------------------===//
#include "ManifestValidate.h"

#include "ArtifactFormatUtil.h"
#include "ingot/KernelTable.h"

#include <optional>
#include <set>

namespace ingot::format {
namespace {

/// "2 inputs", "1 to 3 outputs", "1 or more inputs".
std::string count(size_t lo, size_t hi, const char *noun) {
  std::string n = hi == SIZE_MAX ? std::to_string(lo) + " or more"
                  : lo == hi ? std::to_string(lo)
                             : std::to_string(lo) + " to " + std::to_string(hi);
  return n + " " + noun + (lo == 1 && hi == 1 ? "" : "s");
}

std::string outputNames(const KernelSignature &sig) {
  std::string r;
  for (const OperandSpec &o : sig.outputs)
    r.append(r.empty() ? "" : ", ")
        .append(o.name)
        .append(o.optional ? "?" : "");
  return r;
}

Status checkArity(const Manifest &m, size_t index, const KernelSignature &sig) {
  const Step &s = m.steps[index];
  const std::string what = describeStep(m, index);
  const size_t n = s.inputs.size();
  if (n < sig.minInputs() || n > sig.maxInputs())
    return fail(what + ": '" + s.kernel + "' takes " +
                count(sig.minInputs(), sig.maxInputs(), "input") + " (" +
                sig.inputNames() + "), the step has " + std::to_string(n));
  for (size_t k = 0; k < n; ++k)
    if (s.inputs[k] == kNoBuffer && (k < sig.minInputs() || sig.variadic))
      return fail(what + ": input " + std::to_string(k) + " '" +
                  sig.input(k)->name + "' of '" + s.kernel +
                  "' is required, but the step leaves it out");
  const size_t outs = s.outputs.size();
  if (outs < sig.minOutputs() || outs > sig.maxOutputs())
    return fail(what + ": '" + s.kernel + "' writes " +
                count(sig.minOutputs(), sig.maxOutputs(), "output") + " (" +
                outputNames(sig) + "), the step has " + std::to_string(outs));
  return Status::ok();
}

/// Checks one operand's buffer dtype against its spec.
Status checkOperandDType(const Manifest &m, size_t index,
                         const KernelSignature &sig, const OperandSpec &spec,
                         const char *side, size_t k, uint32_t id) {
  const Step &s = m.steps[index];
  std::optional<DType> same;
  if (spec.sameAs >= 0 && size_t(spec.sameAs) < s.inputs.size() &&
      s.inputs[spec.sameAs] != kNoBuffer)
    same = m.buffers[s.inputs[spec.sameAs]].dtype;
  const DType t = m.buffers[id].dtype;
  if (acceptsDType(spec, t, same))
    return Status::ok();
  return fail(describeStep(m, index) + ": " + side + " " + std::to_string(k) +
              " '" + spec.name + "' is " + describeBuffer(m, id) + " of " +
              dtypeName(t) + ", but '" + s.kernel + "' takes " +
              describeAccepted(spec, sig, same) + " there");
}

Status checkDTypes(const Manifest &m, size_t index,
                   const KernelSignature &sig) {
  const Step &s = m.steps[index];
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (s.inputs[k] != kNoBuffer)
      if (Status st = checkOperandDType(m, index, sig, *sig.input(k), "input",
                                        k, s.inputs[k]);
          !st)
        return st;
  for (size_t k = 0; k < s.outputs.size(); ++k)
    if (Status st = checkOperandDType(m, index, sig, *sig.output(k), "output",
                                      k, s.outputs[k]);
        !st)
      return st;
  return Status::ok();
}

/// A misspelt name would be ignored (the kernel takes its default), so
/// only declared names pass, each once.
Status checkAttrs(const Manifest &m, size_t index, const KernelSignature &sig) {
  const Step &s = m.steps[index];
  std::set<std::string> seen;
  for (const Attr &a : s.attrs) {
    if (!sig.declaresAttr(a.name))
      return fail(describeStep(m, index) + ": attribute " + quoted(a.name) +
                  " is not one '" + s.kernel + "' takes (" + sig.attrNames() +
                  ")");
    if (!seen.insert(a.name).second)
      return fail(describeStep(m, index) + ": attribute " + quoted(a.name) +
                  " is given twice");
  }
  return Status::ok();
}

/// A control-flow step may only pass over steps that exist, forward.
Status checkSkip(const Manifest &m, size_t index) {
  const Step &s = m.steps[index];
  if (s.kernel != "skip" && s.kernel != "skip_unless")
    return Status::ok();
  for (const Attr &a : s.attrs)
    if (a.name == "steps") {
      const int64_t after = int64_t(m.steps.size() - index - 1);
      if (a.kind != Attr::Kind::Int || a.i < 0 || a.i > after)
        return fail(describeStep(m, index) +
                    ": attribute \"steps\" must be "
                    "an integer in [0, " +
                    std::to_string(after) + "], the steps after it");
      return Status::ok();
    }
  return fail(describeStep(m, index) + ": attribute \"steps\" is missing");
}

} // namespace

std::string describeStep(const Manifest &m, size_t index) {
  const Step &s = m.steps[index];
  return "step " + std::to_string(index) + " (" + quoted(s.kernel) + " from " +
         quoted(s.origin) + ")";
}

std::string describeBuffer(const Manifest &m, uint32_t id) {
  return "buffer " + std::to_string(id) + " " + quoted(m.buffers[id].name);
}

Status validateSteps(const Manifest &m) {
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const KernelSpec *k = findKernelSpec(m.steps[i].kernel);
    // An unknown name is refused here, at load, rather than when the step
    // first runs: an artifact from a newer compiler fails before any work.
    if (!k)
      return fail(describeStep(m, i) + ": unknown kernel " +
                  quoted(m.steps[i].kernel) +
                  "; the artifact needs a newer ingot runtime, or it is "
                  "damaged: recompile it with this version");
    if (!k->sig.declared())
      continue;
    if (Status s = checkArity(m, i, k->sig); !s)
      return s;
    if (Status s = checkDTypes(m, i, k->sig); !s)
      return s;
    if (Status s = checkAttrs(m, i, k->sig); !s)
      return s;
    if (Status s = checkSkip(m, i); !s)
      return s;
  }
  return Status::ok();
}

} // namespace ingot::format
