//===- KernelRegistry.h - CPU kernels by name and their context -*- C++ -*-===//
//
// A kernel is `Status fn(KernelContext &)`. The executor (or a test) fills a
// KernelContext with the step's operands, attrs and thread pool; the kernel
// checks dtypes and shapes, computes the output shapes with ShapeRules, calls
// setOutputShape (which enforces the compiled bound) and writes the outputs.
// Each kernel implements an entry of the shared kernel table
// (ingot/KernelTable.h), whose signature the manifest validator checks
// steps against at load. Names and semantics:
// docs/kernels.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"
#include "ingot/KernelTable.h"
#include "ingot/Manifest.h"
#include "ingot/Quant.h"
#include "ingot/ShapeRules.h"
#include "ingot/Status.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingot {
class ThreadPool;
struct KvCacheView;
} // namespace ingot

namespace ingot::cpu {

class StepCache;

/// A read-only operand. `present` is false for an absent optional input.
struct KernelInput {
  bool present = false;
  const void *data = nullptr;
  DType dtype = DType::F32;
  shape::Shape shape; // runtime shape, all dims known
  std::string name;   // buffer/value name, for messages
  int64_t groupSize = 0; // quantised weights: values per block (Quant.h)
  /// How a weight's bytes are ordered (WeightLayout.h); activations are
  /// row-major.
  std::string_view layout = "row-major";
  /// A weight of the artifact: the same bytes at the same address on every
  /// run, so what a kernel derives from it may be kept (StepCache.h).
  bool constant = false;

  int64_t numElements() const { return shape::numElements(shape); }
  size_t bytes() const {
    if (isQuantDType(dtype)) // blocks of a quantised [N, K] weight
      return shape.size() == 2
                 ? size_t(std::max<int64_t>(
                       0, quantTensorBytes(dtype, shape[0], shape[1],
                                           groupSize)))
                 : 0;
    return size_t(numElements()) * dtypeSize(dtype);
  }
  template <typename T> const T *as() const {
    return static_cast<const T *>(data);
  }
};

class RunTimeStorage;

/// A result buffer. The kernel must call KernelContext::setOutputShape before
/// writing (and before taking `data`: a buffer sized at run time gets its
/// memory there); `data` may alias an input's data for in-place kernels.
struct KernelOutput {
  void *data = nullptr;
  RunTimeStorage *storage = nullptr; // set when sized at run time
  DType dtype = DType::F32;
  uint64_t capacityBytes = 0;
  shape::Shape maxShape; // compiled bound, for messages
  shape::Shape shape;    // set by the kernel
  bool shapeSet = false;
  std::string name;

  int64_t numElements() const { return shape::numElements(shape); }
  template <typename T> T *as() const { return static_cast<T *>(data); }
};

struct KernelInfo;

class KernelContext {
public:
  /// Looks `kernel` up in the table: a registered kernel's own checks
  /// (expectArity, expectInputDType, expectOutputDType, the attr getters)
  /// then fail when they accept more than its signature declares.
  KernelContext(std::string kernel, std::string origin,
                const std::vector<Attr> *attrs, ThreadPool *pool);
  /// For the executor: `info` already looked up, `kernel` and `origin`
  /// kept alive by the caller (the manifest's step), nothing copied.
  KernelContext(const KernelInfo *info, std::string_view kernel,
                std::string_view origin, const std::vector<Attr> *attrs,
                ThreadPool *pool);
  // The names may view the object's own strings: a move points them at
  // the new object's copies.
  KernelContext(KernelContext &&other) noexcept;
  KernelContext(const KernelContext &) = delete;
  KernelContext &operator=(const KernelContext &) = delete;
  KernelContext &operator=(KernelContext &&) = delete;

  // Operands, filled by the caller before the kernel runs.
  std::vector<KernelInput> inputs;
  std::vector<KernelOutput> outputs;

  std::string_view kernel() const { return kernel_; }
  std::string_view origin() const { return origin_; }
  ThreadPool *pool() const { return pool_; }
  /// The KV cache of the run, or nullptr when the caller set none.
  const KvCacheView *kvCache() const { return kvCache_; }
  void setKvCache(const KvCacheView *view) { kvCache_ = view; }
  /// Where this step keeps what it derives from constant inputs across
  /// runs, or nullptr (then the kernel recomputes it).
  StepCache *stepCache() const { return stepCache_; }
  void setStepCache(StepCache *cache) { stepCache_ = cache; }

  size_t numInputs() const { return inputs.size(); }
  bool hasInput(size_t i) const {
    return i < inputs.size() && inputs[i].present;
  }
  const KernelInput &input(size_t i) const { return inputs[i]; }
  size_t numOutputs() const { return outputs.size(); }
  KernelOutput &output(size_t i) { return outputs[i]; }

  /// Error message prefixed with the step: "node 'blk0/mm' (matmul): ...".
  Status error(const std::string &message) const;

  /// Checks the operand counts: inputs in [minIn, maxIn] (given ones must be
  /// present unless optional), and exactly `numOut` outputs.
  Status expectArity(size_t minIn, size_t maxIn, size_t numOut) const;
  /// Checks that input `i` (or output `i`) has one of `allowed` dtypes.
  Status expectInputDType(size_t i, std::initializer_list<DType> allowed) const;
  /// expectInputDType for every input that is present.
  Status expectInputsDType(std::initializer_list<DType> allowed) const;
  Status expectOutputDType(size_t i,
                           std::initializer_list<DType> allowed) const;

  /// Records output `i`'s runtime shape; fails, suggesting --max-dim, when it
  /// needs more bytes than the buffer holds.
  Status setOutputShape(size_t i, const shape::Shape &shape);

  // Attributes. A missing attr takes `dflt` when given, else is an error; an
  // attr of another kind is always an error.
  Status attrInt(std::string_view name, int64_t *out,
                 std::optional<int64_t> dflt = std::nullopt) const;
  Status attrFloat(std::string_view name, double *out,
                   std::optional<double> dflt = std::nullopt) const;
  Status
  attrInts(std::string_view name, std::vector<int64_t> *out,
           std::optional<std::vector<int64_t>> dflt = std::nullopt) const;
  Status
  attrFloats(std::string_view name, std::vector<double> *out,
             std::optional<std::vector<double>> dflt = std::nullopt) const;
  Status attrStr(std::string_view name, std::string *out,
                 std::optional<std::string> dflt = std::nullopt) const;
  const Attr *findAttr(std::string_view name) const;

  /// Steps the executor passes over after this one (control-flow kernels
  /// set it; see ControlFlow.cpp).
  int64_t skipSteps() const { return skipSteps_; }
  void setSkipSteps(int64_t n) { skipSteps_ = n; }

  /// Runs fn over [0, n) on the pool (serially without one).
  void parallelFor(int64_t n, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &fn) const;

private:
  Status attrLookup(std::string_view name, Attr::Kind kind, bool hasDefault,
                    const Attr **out) const;
  /// An error naming a disagreement between the kernel and its table entry.
  Status tableMismatch(const std::string &what) const;
  /// Fails when the kernel accepts a dtype on an operand its table entry
  /// does not admit.
  Status checkTableDTypes(const OperandSpec *spec, const char *side, size_t i,
                          std::initializer_list<DType> allowed) const;

  std::string ownedKernel_, ownedOrigin_; // for the copying constructor
  bool ownsNames_ = false;                // the views below are of those
  std::string_view kernel_, origin_;
  const std::vector<Attr> *attrs_;
  ThreadPool *pool_;
  const KvCacheView *kvCache_ = nullptr;
  StepCache *stepCache_ = nullptr;
  int64_t skipSteps_ = 0;
  const KernelInfo *info_ = nullptr; // nullptr for a name not in the table
};

using KernelFn = Status (*)(KernelContext &);

/// What a kernel family registers: an implementation of a kernel of the
/// shared table (ingot/KernelTable.h).
struct KernelImpl {
  const char *name;
  KernelFn fn;
};

/// A registered kernel and its entry in the shared table, read in place
/// (the table is the one declaration of a kernel's contract).
struct KernelInfo {
  const char *name;
  KernelFn fn;
  /// Null for an implementation without an entry (KernelTableTest fails).
  const KernelSpec *spec;

  /// Whether the memory planner may alias an output with an input.
  bool inPlace() const { return spec && spec->inPlace; }
  /// Operands, dtypes and attribute names the kernel takes (empty when it
  /// has no entry).
  const KernelSignature &sig() const;
};

/// The kernel named `name`, or nullptr.
const KernelInfo *findKernel(std::string_view name);
/// Every registered kernel, for listings and tests.
const std::vector<KernelInfo> &allKernels();

/// Family registration hooks, one per source file.
void addElementwiseKernels(std::vector<KernelImpl> &table);
void addUnaryKernels(std::vector<KernelImpl> &table);
void addMatMulKernels(std::vector<KernelImpl> &table);
void addMatMulIntegerKernels(std::vector<KernelImpl> &table);
void addDynamicQuantizeKernels(std::vector<KernelImpl> &table);
void addConvIntegerKernels(std::vector<KernelImpl> &table);
void addNormalizationKernels(std::vector<KernelImpl> &table);
void addReduceKernels(std::vector<KernelImpl> &table);
void addDataMovementKernels(std::vector<KernelImpl> &table);
void addTransposeKernels(std::vector<KernelImpl> &table);
void addConversionKernels(std::vector<KernelImpl> &table);
// Decoder-LLM kernels.
void addLinearKernels(std::vector<KernelImpl> &table);
void addLlmNormKernels(std::vector<KernelImpl> &table);
void addLlmActivationKernels(std::vector<KernelImpl> &table);
void addRopeKernels(std::vector<KernelImpl> &table);
void addPagedAttentionKernels(std::vector<KernelImpl> &table);
void addDenseAttentionKernels(std::vector<KernelImpl> &table);
// Coverage kernels for the wider ONNX op set (MathKernels.cpp,
// TensorKernels.cpp and the files beside them).
void addMathCoverageKernels(std::vector<KernelImpl> &table);
void addTensorCoverageKernels(std::vector<KernelImpl> &table);
void addFusedElementwiseKernels(std::vector<KernelImpl> &table);

} // namespace ingot::cpu
