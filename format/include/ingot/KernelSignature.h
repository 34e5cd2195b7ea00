//===- KernelSignature.h - What each kernel takes ---------------*- C++ -*-===//
//
// Part of every kernel table entry (KernelTable.h): the operands a kernel
// takes with the dtypes it accepts on each, and the attribute names it
// reads (or the compiler emits for it). The compiler lowers to it, the
// manifest validator checks every step against it, and the runtime's
// KernelContext checks each kernel's own run-time checks against it, so
// the table can never refuse a step the kernel would accept: it is the
// kernel's contract, in one place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingot {

/// A set of dtypes, one bit per DType value.
class DTypeSet {
public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types)
      bits_ |= uint32_t(1) << unsigned(t);
  }
  constexpr bool contains(DType t) const {
    return unsigned(t) < 32 && ((bits_ >> unsigned(t)) & 1);
  }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet operator|(DTypeSet other) const {
    DTypeSet r;
    r.bits_ = bits_ | other.bits_;
    return r;
  }
  /// "float32, int64" (numpy names, in DType order).
  std::string names() const;

private:
  uint32_t bits_ = 0;
};

/// One operand. Its dtype must be in `dtypes`, or equal to that of input
/// `sameAs` when sameAs >= 0 (and that input is given).
struct OperandSpec {
  const char *name;
  DTypeSet dtypes;
  int sameAs = -1;
  /// May be absent (kNoBuffer, or left off the end). Optional operands
  /// follow the required ones.
  bool optional = false;
};

struct KernelSignature {
  std::vector<OperandSpec> inputs;
  std::vector<OperandSpec> outputs;
  /// Every attribute name a step of this kernel may carry.
  std::vector<std::string_view> attrs;
  /// The last input repeats: any number of inputs from minInputs() on, all
  /// of them given.
  bool variadic = false;
  /// A control-flow kernel (skip, skip_unless, fail): it writes nothing
  /// and only decides which steps run next.
  bool control = false;

  /// False for a table entry nobody filled in.
  bool declared() const { return !outputs.empty() || control; }
  size_t minInputs() const { return countRequired(inputs); }
  size_t maxInputs() const { return variadic ? SIZE_MAX : inputs.size(); }
  size_t minOutputs() const { return countRequired(outputs); }
  size_t maxOutputs() const { return outputs.size(); }
  /// The spec of input `i` (the last one repeats for a variadic kernel);
  /// nullptr past the end.
  const OperandSpec *input(size_t i) const;
  const OperandSpec *output(size_t i) const {
    return i < outputs.size() ? &outputs[i] : nullptr;
  }
  bool declaresAttr(std::string_view name) const;
  /// "x, weight, bias?" for messages.
  std::string inputNames() const;
  /// "activation, w_layout" or "none".
  std::string attrNames() const;

private:
  static size_t countRequired(const std::vector<OperandSpec> &ops);
};

/// Whether `spec` admits `dtype`; `sameAsDType` is the dtype of input
/// spec.sameAs when that input is given.
bool acceptsDType(const OperandSpec &spec, DType dtype,
                  std::optional<DType> sameAsDType);
/// What `spec` admits, for messages: "float32, float16", or "the dtype of
/// input 0 'a' (float32)".
std::string describeAccepted(const OperandSpec &spec,
                             const KernelSignature &sig,
                             std::optional<DType> sameAsDType);

namespace sig {
// What the table files spell signatures with.

namespace dtypes {
inline constexpr DTypeSet kF32{DType::F32};
inline constexpr DTypeSet kI64{DType::I64};
inline constexpr DTypeSet kBool{DType::Bool};
/// Indices, shapes and axes read with readIndexVector.
inline constexpr DTypeSet kIndex{DType::I64, DType::I32};
inline constexpr DTypeSet kNumeric{DType::F32, DType::I64, DType::I32};
inline constexpr DTypeSet kLogical = kNumeric | kBool;
/// Stored weights the LLM kernels widen to f32 themselves.
inline constexpr DTypeSet kFloatWeight{DType::F32, DType::F16, DType::BF16};
inline constexpr DTypeSet kQuant{DType::Q8, DType::Q4, DType::Q4M,
                                 DType::F8E4M3};
/// Every dtype with an element size: what data-movement kernels copy.
inline constexpr DTypeSet kDense{
    DType::F32,        DType::F16,      DType::BF16,       DType::F64,
    DType::I64,        DType::I32,      DType::I8,         DType::U8,
    DType::Bool,       DType::I16,      DType::U16,        DType::U32,
    DType::U64,        DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2,
    DType::F8E5M2FNUZ, DType::F4E2M1,   DType::I4,         DType::U4,
    DType::I2,         DType::U2};
inline constexpr DTypeSet kAny = kDense | kQuant;
} // namespace dtypes

/// Shorthands for the tables: a required operand, an optional one, and one
/// whose dtype must equal input `k`'s.
inline OperandSpec in(const char *name, DTypeSet t) { return {name, t}; }
inline OperandSpec opt(const char *name, DTypeSet t) {
  return {name, t, -1, true};
}
inline OperandSpec like(const char *name, int k, DTypeSet also = {}) {
  return {name, also, k};
}
inline OperandSpec optLike(const char *name, int k) {
  return {name, {}, k, true};
}

} // namespace sig
} // namespace ingot
