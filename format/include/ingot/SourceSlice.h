//===- SourceSlice.h - A weight made from one source tensor -----*- C++ -*-===//
//
// A model's weight can be a whole tensor of its checkpoint or a slice of
// one: rows of a fused Q/K/V or gate/up tensor, columns of GPT-2's Conv1D
// weight, or 1 + a Gemma norm weight. The importer names such a weight
// "KEY", "KEY#rows=A:B", "KEY#cols=A:B" or "KEY#plus1"; the compiler's
// weight source and the runtime's external-weight loader both turn that
// name into bytes here, from the stored tensor's bytes, so both produce
// the same values. Every float value passes a NonFiniteScan on the way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/ArtifactWriter.h"
#include "ingot/DType.h"
#include "ingot/Status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ingot {

/// One parsed part name.
struct SourcePart {
  enum class Kind { Whole, Rows, Cols, PlusOne };
  std::string key; // the tensor's name in the checkpoint
  Kind kind = Kind::Whole;
  int64_t begin = 0, end = 0; // Rows, Cols: [begin, end)
};

/// Parses "KEY", "KEY#rows=A:B", "KEY#cols=A:B" (0 <= A < B) or
/// "KEY#plus1"; the error says what was expected.
Status parseSourcePart(const std::string &name, SourcePart *out);

/// A tensor as its checkpoint stores it.
struct StoredTensor {
  std::string file;           // for messages
  std::string dtypeName;      // safetensors' name: "F32", "BF16", ...
  std::optional<DType> dtype; // F32, F16 or BF16: the float weight dtypes
  size_t elementSize = 0;
  std::vector<int64_t> shape;
};

/// Streams `size` bytes at `offset` of the stored tensor's bytes into the
/// sink, in one call or several.
using StoredReader =
    std::function<Status(uint64_t offset, uint64_t size, const ByteSink &sink)>;

/// Streams the values `part` (of the weight `name`) selects from `t`:
/// Whole and Rows in the stored dtype, Cols row by row, PlusOne widened to
/// f32. A slice out of range, or a NaN or infinity among the values, is an
/// error naming the file and the tensor.
Status produceSourcePart(const StoredTensor &t, const SourcePart &part,
                         const std::string &name, const StoredReader &read,
                         const ByteSink &sink);

/// "[2, 3]": a shape as the messages about source tensors write it.
std::string shapeText(const std::vector<int64_t> &shape);

/// Bytes per element of a safetensors dtype name; 0 when unknown.
size_t safetensorsDTypeSize(const std::string &name);

} // namespace ingot
