//===- KernelRegistry.cpp - Kernel table and KernelContext helpers --------===//

#include "cpu/KernelRegistry.h"

#include "ingot/ThreadPool.h"

#include <algorithm>

namespace ingot::cpu {
namespace {

const char *kindName(Attr::Kind k) {
  switch (k) {
  case Attr::Kind::Int:
    return "Int";
  case Attr::Kind::Float:
    return "Float";
  case Attr::Kind::Ints:
    return "Ints";
  case Attr::Kind::Floats:
    return "Floats";
  case Attr::Kind::Str:
    return "Str";
  }
  return "?";
}

std::string dtypeList(std::initializer_list<DType> allowed) {
  std::string r;
  for (DType t : allowed) {
    if (!r.empty())
      r += ", ";
    r += dtypeName(t);
  }
  return r;
}

std::vector<KernelInfo> buildTable() {
  // Explicit calls rather than static registrars: a static library would
  // silently drop registrar objects nobody references.
  std::vector<KernelInfo> table;
  addElementwiseKernels(table);
  addUnaryKernels(table);
  addMatMulKernels(table);
  addNormalizationKernels(table);
  addReduceKernels(table);
  addDataMovementKernels(table);
  addTransposeKernels(table);
  addConversionKernels(table);
  addLinearKernels(table);
  addLlmNormKernels(table);
  addLlmActivationKernels(table);
  addRopeKernels(table);
  addPagedAttentionKernels(table);
  addMathCoverageKernels(table);
  addTensorCoverageKernels(table);
  addFusedElementwiseKernels(table);
  std::sort(table.begin(), table.end(),
            [](const KernelInfo &a, const KernelInfo &b) {
              return std::string_view(a.name) < std::string_view(b.name);
            });
  return table;
}

} // namespace

const std::vector<KernelInfo> &allKernels() {
  static const std::vector<KernelInfo> table = buildTable();
  return table;
}

const KernelInfo *findKernel(std::string_view name) {
  const std::vector<KernelInfo> &table = allKernels();
  auto it = std::lower_bound(
      table.begin(), table.end(), name,
      [](const KernelInfo &k, std::string_view n) { return k.name < n; });
  if (it == table.end() || it->name != name)
    return nullptr;
  return &*it;
}

Status KernelContext::error(const std::string &message) const {
  std::string where = origin_.empty() ? "step" : "node '" + origin_ + "'";
  return Status::error(where + " (" + kernel_ + "): " + message);
}

Status KernelContext::expectArity(size_t minIn, size_t maxIn,
                                  size_t numOut) const {
  if (inputs.size() < minIn || inputs.size() > maxIn) {
    std::string want =
        minIn == maxIn ? std::to_string(minIn)
                       : std::to_string(minIn) + " to " + std::to_string(maxIn);
    return error("expects " + want + " inputs, got " +
                 std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < minIn; ++i)
    if (!inputs[i].present)
      return error("required input " + std::to_string(i) + " is missing");
  if (outputs.size() != numOut)
    return error("expects " + std::to_string(numOut) + " outputs, got " +
                 std::to_string(outputs.size()));
  return Status::ok();
}

Status
KernelContext::expectInputDType(size_t i,
                                std::initializer_list<DType> allowed) const {
  DType t = inputs[i].dtype;
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end())
    return Status::ok();
  return error("input " + std::to_string(i) + " '" + inputs[i].name +
               "' has dtype " + dtypeName(t) +
               "; supported: " + dtypeList(allowed));
}

Status
KernelContext::expectOutputDType(size_t i,
                                 std::initializer_list<DType> allowed) const {
  DType t = outputs[i].dtype;
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end())
    return Status::ok();
  return error("output " + std::to_string(i) + " '" + outputs[i].name +
               "' has dtype " + dtypeName(t) +
               "; supported: " + dtypeList(allowed));
}

Status KernelContext::setOutputShape(size_t i, const shape::Shape &s) {
  KernelOutput &o = outputs[i];
  for (int64_t d : s)
    if (d < 0)
      return error("computed an invalid shape " + shape::toString(s) +
                   " for output '" + o.name + "'");
  uint64_t need = uint64_t(shape::numElements(s)) * dtypeSize(o.dtype);
  if (need > o.capacityBytes)
    return error(
        "output buffer '" + o.name + "' needs shape " + shape::toString(s) +
        " (" + std::to_string(need) + " bytes) but was compiled for at most " +
        shape::toString(o.maxShape) + " (" + std::to_string(o.capacityBytes) +
        " bytes); recompile with a larger bound, e.g. --max-dim "
        "SYMBOL=N");
  o.shape = s;
  o.shapeSet = true;
  return Status::ok();
}

const Attr *KernelContext::findAttr(std::string_view name) const {
  if (!attrs_)
    return nullptr;
  for (const Attr &a : *attrs_)
    if (a.name == name)
      return &a;
  return nullptr;
}

Status KernelContext::attrLookup(std::string_view name, Attr::Kind kind,
                                 bool hasDefault, const Attr **out) const {
  const Attr *a = findAttr(name);
  *out = a;
  if (!a) {
    if (hasDefault)
      return Status::ok();
    return error("missing attribute '" + std::string(name) + "' (" +
                 kindName(kind) + ")");
  }
  if (a->kind != kind)
    return error("attribute '" + std::string(name) + "' is " +
                 kindName(a->kind) + ", expected " + kindName(kind));
  return Status::ok();
}

// The five typed getters differ only in the field they read.
#define INGOT_ATTR_GETTER(Fn, Type, KindName, Field)                           \
  Status KernelContext::Fn(std::string_view name, Type *out,                   \
                           std::optional<Type> dflt) const {                   \
    const Attr *a;                                                             \
    Status s = attrLookup(name, Attr::Kind::KindName, dflt.has_value(), &a);   \
    if (!s)                                                                    \
      return s;                                                                \
    *out = a ? a->Field : *dflt;                                               \
    return Status::ok();                                                       \
  }
INGOT_ATTR_GETTER(attrInt, int64_t, Int, i)
INGOT_ATTR_GETTER(attrFloat, double, Float, f)
INGOT_ATTR_GETTER(attrInts, std::vector<int64_t>, Ints, ints)
INGOT_ATTR_GETTER(attrFloats, std::vector<double>, Floats, floats)
INGOT_ATTR_GETTER(attrStr, std::string, Str, s)
#undef INGOT_ATTR_GETTER

void KernelContext::parallelFor(
    int64_t n, int64_t grain,
    const std::function<void(int64_t, int64_t)> &fn) const {
  if (pool_)
    pool_->parallelFor(n, grain, fn);
  else if (n > 0)
    fn(0, n);
}

} // namespace ingot::cpu
