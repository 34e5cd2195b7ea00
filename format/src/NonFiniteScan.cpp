//===- NonFiniteScan.cpp - NaN and infinity in streamed weights -----------===//
#include "ingot/NonFiniteScan.h"

#include <algorithm>
#include <cstring>

namespace ingot {
namespace {

/// Whether any of the `n` elements at `p` has an all-ones exponent.
template <typename Bits>
bool anyAllOnesExponent(const uint8_t *p, size_t n, uint32_t mask) {
  bool any = false;
  for (size_t j = 0; j < n; ++j) {
    Bits bits;
    std::memcpy(&bits, p + j * sizeof(Bits), sizeof(Bits));
    any |= (bits & mask) == mask;
  }
  return any;
}

} // namespace

NonFiniteScan::NonFiniteScan(DType dtype)
    : dtype_(dtype),
      elementSize_(dtype == DType::F32                           ? 4
                   : dtype == DType::F16 || dtype == DType::BF16 ? 2
                                                                 : 0) {}

int NonFiniteScan::classify(const uint8_t *e) const {
  // An all-ones exponent is an infinity (zero mantissa) or a NaN.
  if (elementSize_ == 4) {
    uint32_t bits;
    std::memcpy(&bits, e, 4);
    if ((bits & 0x7f800000u) != 0x7f800000u)
      return 0;
    return bits & 0x007fffffu ? 2 : 1;
  }
  uint16_t bits;
  std::memcpy(&bits, e, 2);
  const uint16_t exponent = dtype_ == DType::F16 ? 0x7c00 : 0x7f80;
  if ((bits & exponent) != exponent)
    return 0;
  return bits & uint16_t(~exponent & 0x7fff) ? 2 : 1;
}

void NonFiniteScan::scan(const void *data, size_t size) {
  if (!elementSize_ || first_)
    return;
  const uint8_t *p = static_cast<const uint8_t *>(data);
  auto record = [&](int kind) {
    first_ = seen_;
    firstNaN_ = kind == 2;
  };
  if (carried_) { // finish the element the last chunk split
    size_t take = std::min(elementSize_ - carried_, size);
    std::memcpy(carry_ + carried_, p, take);
    carried_ += take, p += take, size -= take;
    if (carried_ < elementSize_)
      return;
    carried_ = 0;
    if (int kind = classify(carry_))
      return record(kind);
    ++seen_;
  }
  const size_t whole = size / elementSize_;
  const uint32_t mask = elementSize_ == 4      ? 0x7f800000u
                        : dtype_ == DType::F16 ? 0x7c00u
                                               : 0x7f80u;
  // Blocks of elements are tested without a branch per element (which the
  // compiler can vectorise); only a block with a hit is searched.
  constexpr size_t kBlock = 256;
  for (size_t i = 0; i < whole; i += kBlock) {
    const size_t n = std::min(kBlock, whole - i);
    const uint8_t *block = p + i * elementSize_;
    const bool any = elementSize_ == 4
                         ? anyAllOnesExponent<uint32_t>(block, n, mask)
                         : anyAllOnesExponent<uint16_t>(block, n, mask);
    if (!any) {
      seen_ += n;
      continue;
    }
    for (size_t j = 0; j < n; ++j, ++seen_)
      if (int kind = classify(block + j * elementSize_))
        return record(kind);
  }
  carried_ = size - whole * elementSize_;
  std::memcpy(carry_, p + whole * elementSize_, carried_);
}

Status nonFiniteError(const std::string &file, const std::string &tensor,
                      uint64_t element, bool isNaN) {
  return Status::error(file + ": tensor '" + tensor + "' has " +
                       (isNaN ? "a NaN" : "an infinity") + " at element " +
                       std::to_string(element));
}

} // namespace ingot
