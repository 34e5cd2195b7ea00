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
#include <memory>
#include <mutex>

namespace ingot::cpu {

class StepCache {
public:
  /// The value stored under `key`, made by `build()` (returning a T) the
  /// first time or when the key changed (another weight or shape).
  template <typename T, typename Build>
  std::shared_ptr<const T> get(uint64_t key, Build build) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!value_ || key_ != key) {
      value_ = std::make_shared<const T>(build());
      key_ = key;
    }
    return std::static_pointer_cast<const T>(value_);
  }

private:
  std::mutex mutex_;
  uint64_t key_ = 0;
  std::shared_ptr<const void> value_;
};

} // namespace ingot::cpu
