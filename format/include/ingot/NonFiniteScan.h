//===- NonFiniteScan.h - NaN and infinity in streamed weights ---*- C++ -*-===//
//
// A weight holding a NaN or an infinity poisons every activation it
// touches: the logits turn NaN and sampling emits token 0, silently. The
// weight sources (HF safetensors, packed checkpoints, GGUF) hand every
// float tensor through a NonFiniteScan while its bytes pass by anyway, so
// the check is one linear pass over memory already in cache: the exponent
// bits of each element, no conversion.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"
#include "ingot/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ingot {

class NonFiniteScan {
public:
  /// Elements of `dtype`: F32, F16 or BF16 (any other dtype scans nothing).
  explicit NonFiniteScan(DType dtype);

  /// The next `size` bytes of the stream; chunks may split an element.
  void scan(const void *data, size_t size);
  /// Whether a NaN or an infinity has been seen.
  bool found() const { return first_.has_value(); }
  /// The index (in the stream) of the first one.
  uint64_t firstIndex() const { return first_.value_or(0); }
  bool firstIsNaN() const { return firstNaN_; }

private:
  /// 0 if finite, 1 for an infinity, 2 for a NaN.
  int classify(const uint8_t *element) const;

  DType dtype_;
  size_t elementSize_;
  uint64_t seen_ = 0; // whole elements scanned
  uint8_t carry_[4] = {};
  size_t carried_ = 0; // bytes of a split element waiting in carry_
  std::optional<uint64_t> first_;
  bool firstNaN_ = false;
};

/// "FILE: tensor 'NAME' has a NaN at element N" (or "an infinity").
Status nonFiniteError(const std::string &file, const std::string &tensor,
                      uint64_t element, bool isNaN);

} // namespace ingot
