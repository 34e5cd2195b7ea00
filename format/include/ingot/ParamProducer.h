//===- ParamProducer.h - Bytes of a planned weight tensor -------*- C++ -*-===//
//
// A plan.param is a source tensor, or several concatenated (merged
// projections), possibly packed into a kernel layout. This streams plain
// ones and row-major concatenations along dim 0 (merged Q/K/V, gate/up)
// straight from the weight source, and materialises one tensor at a time
// for the others (column concatenation, packing), so compiling needs memory
// for one tensor at most.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/WeightSource.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot {

struct ParamSpec {
  std::string name;               // the tensor table's name
  std::vector<std::string> parts; // source tensors; empty: `name` itself
  int64_t concatAxis = 0;
  std::string layout = "row-major";
  std::vector<int64_t> shape; // logical shape of the whole tensor
  size_t elemBytes = 4;
  DType elemType = DType::F32; // of the source values
  /// A quantised format (ingot/Quant.h) to store the values in, with
  /// `group` values per block; F32 = stored as they are.
  DType quant = DType::F32;
  int64_t group = 0;
};

Status produceParam(WeightSource &weights, const ParamSpec &spec,
                    const ByteSink &sink);

/// The spec of a tensor kept outside the artifact, from its manifest entry
/// (its dtype, group size and layout, and its transform).
ParamSpec paramSpecOf(const TensorEntry &t);

} // namespace ingot
