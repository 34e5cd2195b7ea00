//===- KernelRegistry.cpp - Kernel table and KernelContext helpers --------===//

#include "cpu/KernelRegistry.h"
#include "cpu/RunTimeStorage.h"

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
  std::vector<KernelImpl> impls;
  addElementwiseKernels(impls);
  addUnaryKernels(impls);
  addMatMulKernels(impls);
  addMatMulIntegerKernels(impls);
  addDynamicQuantizeKernels(impls);
  addConvIntegerKernels(impls);
  addNormalizationKernels(impls);
  addReduceKernels(impls);
  addDataMovementKernels(impls);
  addTransposeKernels(impls);
  addConversionKernels(impls);
  addLinearKernels(impls);
  addLlmNormKernels(impls);
  addLlmActivationKernels(impls);
  addRopeKernels(impls);
  addPagedAttentionKernels(impls);
  addDenseAttentionKernels(impls);
  addMathCoverageKernels(impls);
  addTensorCoverageKernels(impls);
  addFusedElementwiseKernels(impls);
  // The contract of each comes from the shared table; an implementation
  // without an entry gets none (KernelTableTest fails on it).
  std::vector<KernelInfo> table;
  for (const KernelImpl &impl : impls)
    table.push_back({impl.name, impl.fn, findKernelSpec(impl.name)});
  std::sort(table.begin(), table.end(),
            [](const KernelInfo &a, const KernelInfo &b) {
              return std::string_view(a.name) < std::string_view(b.name);
            });
  return table;
}

} // namespace

const KernelSignature &KernelInfo::sig() const {
  static const KernelSignature kUndeclared{};
  return spec ? spec->sig : kUndeclared;
}

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

KernelContext::KernelContext(std::string kernel, std::string origin,
                             const std::vector<Attr> *attrs, ThreadPool *pool)
    : ownedKernel_(std::move(kernel)), ownedOrigin_(std::move(origin)),
      ownsNames_(true), kernel_(ownedKernel_), origin_(ownedOrigin_),
      attrs_(attrs), pool_(pool), info_(findKernel(kernel_)) {
  if (info_ && !info_->sig().declared())
    info_ = nullptr; // no signature to hold the kernel to (a unit test fails)
}

KernelContext::KernelContext(const KernelInfo *info, std::string_view kernel,
                             std::string_view origin,
                             const std::vector<Attr> *attrs, ThreadPool *pool)
    : kernel_(kernel), origin_(origin), attrs_(attrs), pool_(pool),
      info_(info && info->sig().declared() ? info : nullptr) {}

KernelContext::KernelContext(KernelContext &&other) noexcept
    : inputs(std::move(other.inputs)), outputs(std::move(other.outputs)),
      ownedKernel_(std::move(other.ownedKernel_)),
      ownedOrigin_(std::move(other.ownedOrigin_)), ownsNames_(other.ownsNames_),
      kernel_(ownsNames_ ? std::string_view(ownedKernel_) : other.kernel_),
      origin_(ownsNames_ ? std::string_view(ownedOrigin_) : other.origin_),
      attrs_(other.attrs_), pool_(other.pool_), kvCache_(other.kvCache_),
      stepCache_(other.stepCache_), skipSteps_(other.skipSteps_),
      info_(other.info_) {}

Status KernelContext::tableMismatch(const std::string &what) const {
  return error("the kernel and its table entry (KernelRegistry) disagree: " +
               what);
}

Status
KernelContext::checkTableDTypes(const OperandSpec *spec, const char *side,
                                size_t i,
                                std::initializer_list<DType> allowed) const {
  if (!info_)
    return Status::ok();
  if (!spec)
    return tableMismatch(std::string("the kernel checks ") + side + " " +
                         std::to_string(i) + ", which the table does not list");
  std::optional<DType> same;
  if (spec->sameAs >= 0 && hasInput(size_t(spec->sameAs)))
    same = inputs[size_t(spec->sameAs)].dtype;
  for (DType t : allowed)
    if (!acceptsDType(*spec, t, same))
      return tableMismatch(std::string("the kernel accepts ") + dtypeName(t) +
                           " on " + side + " " + std::to_string(i) + " '" +
                           spec->name + "', the table only " +
                           describeAccepted(*spec, info_->sig(), same));
  return Status::ok();
}

Status KernelContext::error(const std::string &message) const {
  std::string where = origin_.empty()
                          ? std::string("step")
                          : std::string("node '").append(origin_).append("'");
  return Status::error(where.append(" (").append(kernel_).append("): ") +
                       message);
}

Status KernelContext::expectArity(size_t minIn, size_t maxIn,
                                  size_t numOut) const {
  if (info_) {
    const KernelSignature &sig = info_->sig();
    if (minIn < sig.minInputs() || maxIn > sig.maxInputs() ||
        numOut < sig.minOutputs() || numOut > sig.maxOutputs())
      return tableMismatch(
          "the kernel takes " + std::to_string(minIn) + " to " +
          std::to_string(maxIn) + " inputs and " + std::to_string(numOut) +
          " outputs; the table " + std::to_string(sig.minInputs()) + " to " +
          (sig.variadic ? std::string("any")
                        : std::to_string(sig.maxInputs())) +
          " inputs and " + std::to_string(sig.minOutputs()) + " to " +
          std::to_string(sig.maxOutputs()) + " outputs");
  }
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
  if (Status s = checkTableDTypes(info_ ? info_->sig().input(i) : nullptr,
                                  "input", i, allowed);
      !s)
    return s;
  DType t = inputs[i].dtype;
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end())
    return Status::ok();
  return error("input " + std::to_string(i) + " '" + inputs[i].name +
               "' has dtype " + dtypeName(t) +
               "; supported: " + dtypeList(allowed));
}

Status
KernelContext::expectInputsDType(std::initializer_list<DType> allowed) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (hasInput(i))
      if (Status s = expectInputDType(i, allowed); !s)
        return s;
  return Status::ok();
}

Status
KernelContext::expectOutputDType(size_t i,
                                 std::initializer_list<DType> allowed) const {
  if (Status s = checkTableDTypes(info_ ? info_->sig().output(i) : nullptr,
                                  "output", i, allowed);
      !s)
    return s;
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
  uint64_t need = dtypeSize(o.dtype);
  for (int64_t d : s)
    if (__builtin_mul_overflow(need, uint64_t(d), &need))
      return error("computed shape " + shape::toString(s) + " for output '" +
                   o.name + "', whose size overflows");
  if (o.storage && (need > o.capacityBytes || !o.data)) {
    if (Status st = o.storage->reserve(need); !st)
      return error("output '" + o.name + "' (sized at run time) of shape " +
                   shape::toString(s) + " " + st.message());
    o.data = o.storage->data();
    o.capacityBytes = o.storage->capacity();
  }
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
  if (info_ && !info_->sig().declaresAttr(name))
    return tableMismatch("the kernel reads attribute '" + std::string(name) +
                         "', which the table does not declare (it declares " +
                         info_->sig().attrNames() + ")");
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
