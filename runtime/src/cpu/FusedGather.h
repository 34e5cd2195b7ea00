//===- FusedGather.h - Broadcast inputs of a fused region -------*- C++ -*-===//
//
// fused_elementwise (FusedElementwise.cpp) evaluates its program a tile of
// the output at a time; these merge the output's dims where every input
// stays contiguous, and copy a broadcast input's elements of one tile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ShapeRules.h"

#include <cstdint>
#include <vector>

namespace ingot::cpu {

/// An input's strides over the merged output dims (0 where broadcast).
struct InputWalk {
  const float *data = nullptr;
  enum Kind { Scalar, Dense, Gather } kind = Gather;
  std::vector<int64_t> strides;
};

/// The output's dims with size-1 dims dropped and neighbours merged where
/// every input stays contiguous across them, and each input's strides.
void planWalks(const shape::Shape &out, std::vector<InputWalk> &walks,
               const std::vector<const shape::Shape *> &shapes,
               std::vector<int64_t> &dims);

/// Copies output elements [begin, begin + n) of a broadcast input to dst.
void gather(const InputWalk &w, const std::vector<int64_t> &dims, int64_t begin,
            int64_t n, float *dst);

} // namespace ingot::cpu
