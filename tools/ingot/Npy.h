//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Format versions 1.0, 2.0 and 3.0; little-endian, C-order arrays of f32,
// f64, f16, i64, i32, i8, u8 and bool. Anything else (Fortran order for
// rank >= 2, big-endian, other dtypes, truncated data) is an error that
// names the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Executor.h"
#include "ingot/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot {

Status readNpy(const std::string &path, HostTensor *out);
/// Writes version 1.0 (2.0 when the header needs it); bf16 has no .npy
/// dtype and is an error.
Status writeNpy(const std::string &path, const HostTensor &tensor);

/// In-memory forms; `name` is used in messages in place of a path.
Status parseNpy(const uint8_t *data, size_t size, const std::string &name,
                HostTensor *out);
Status encodeNpy(const HostTensor &tensor, const std::string &name,
                 std::vector<uint8_t> *out);

} // namespace ingot
