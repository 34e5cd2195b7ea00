//===- KernelSignature.cpp - Queries and messages of kernel signatures ----===//
#include "ingot/KernelSignature.h"

#include <algorithm>

namespace ingot {

std::string DTypeSet::names() const {
  std::string r;
  for (unsigned t = 0; t < 32; ++t)
    if ((bits_ >> t) & 1)
      r.append(r.empty() ? "" : ", ").append(dtypeName(DType(t)));
  return r;
}

const OperandSpec *KernelSignature::input(size_t i) const {
  if (i < inputs.size())
    return &inputs[i];
  return variadic && !inputs.empty() ? &inputs.back() : nullptr;
}

bool KernelSignature::declaresAttr(std::string_view name) const {
  return std::find(attrs.begin(), attrs.end(), name) != attrs.end();
}

std::string KernelSignature::inputNames() const {
  std::string r;
  for (const OperandSpec &o : inputs)
    r.append(r.empty() ? "" : ", ")
        .append(o.name)
        .append(o.optional ? "?" : "");
  return r + (variadic ? "..." : "");
}

std::string KernelSignature::attrNames() const {
  std::string r;
  for (std::string_view a : attrs)
    r.append(r.empty() ? "" : ", ").append(a);
  return r.empty() ? "none" : r;
}

size_t KernelSignature::countRequired(const std::vector<OperandSpec> &ops) {
  size_t n = 0;
  while (n < ops.size() && !ops[n].optional)
    ++n;
  return n;
}

bool acceptsDType(const OperandSpec &spec, DType dtype,
                  std::optional<DType> sameAsDType) {
  return spec.dtypes.contains(dtype) ||
         (spec.sameAs >= 0 && sameAsDType && *sameAsDType == dtype);
}

std::string describeAccepted(const OperandSpec &spec,
                             const KernelSignature &sig,
                             std::optional<DType> sameAsDType) {
  std::string r = spec.dtypes.names();
  if (spec.sameAs >= 0 && sameAsDType) {
    const OperandSpec *of = sig.input(size_t(spec.sameAs));
    r.append(r.empty() ? "" : " or ")
        .append("the dtype of input ")
        .append(std::to_string(spec.sameAs))
        .append(of ? std::string(" '") + of->name + "'" : "")
        .append(" (")
        .append(dtypeName(*sameAsDType))
        .append(")");
  }
  return r.empty() ? "nothing" : r;
}

} // namespace ingot
