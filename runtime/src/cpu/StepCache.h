//===- StepCache.h - What a step derives once from its weights --*- C++ -*-===//
//
// A kernel whose operand is a weight (the same bytes on every run) may
// transform it once, e.g. GEMM weights packed into the micro-kernel's
// panels, and keep the result here for the later runs of the same step.
// The executor owns one cache per step; a kernel called without one (unit
// tests, one-off calls) recomputes. The bytes held count in the process's
// memory but not in the artifact's footprint report.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <typeinfo>

namespace ingot::cpu {

class StepCache {
public:
  /// The value stored under `key`, made by `build()` (returning a T) the
  /// first time or when the key changed (another weight or shape).
  /// The type is part of the key: a kernel that derives two forms on two
  /// paths (say packed panels, then packed rows for another shape) never
  /// reads one as the other.
  template <typename T, typename Build>
  std::shared_ptr<const T> get(uint64_t key, Build build) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!value_ || key_ != key || *type_ != typeid(T)) {
      value_ = std::make_shared<const T>(build());
      key_ = key;
      type_ = &typeid(T);
    }
    return std::static_pointer_cast<const T>(value_);
  }

private:
  std::mutex mutex_;
  uint64_t key_ = 0;
  const std::type_info *type_ = nullptr;
  std::shared_ptr<const void> value_;
};

/// A key for what a kernel derives from the weight at `weight`: its
/// address mixed with everything the derived form depends on (shapes,
/// layout flags, the ISA), so another weight or shape rebuilds it.
inline uint64_t stepCacheKey(const void *weight,
                             std::initializer_list<uint64_t> dependsOn) {
  uint64_t key = reinterpret_cast<uintptr_t>(weight);
  for (uint64_t v : dependsOn)
    key = (key ^ v) * 0x100000001b3ull; // FNV-1a's prime
  return key;
}

} // namespace ingot::cpu
