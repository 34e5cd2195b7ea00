//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Format versions 1.0, 2.0 and 3.0; little-endian, C-order arrays of
// numpy's float, integer and bool dtypes. ml_dtypes' types (bfloat16,
// float8, float4, int4, int2) have no numpy dtype: numpy saves them as raw
// 1- or 2-byte values ('|V1', '<V2'), read here as such for the caller to
// type, and written so for ingot's tensors of those types. Anything else
// (Fortran order for rank >= 2, big-endian, other dtypes, truncated data)
// is an error that names the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Executor.h"
#include "ingot/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot {

/// With `rawBytes`, a file of raw values is read as u8 / u16 and
/// *rawBytes set; without it, such a file is an error.
Status readNpy(const std::string &path, HostTensor *out,
               bool *rawBytes = nullptr);
/// Writes version 1.0 (2.0 when the header needs it).
Status writeNpy(const std::string &path, const HostTensor &tensor);

/// In-memory forms; `name` is used in messages in place of a path.
Status parseNpy(const uint8_t *data, size_t size, const std::string &name,
                HostTensor *out, bool *rawBytes = nullptr);
Status encodeNpy(const HostTensor &tensor, const std::string &name,
                 std::vector<uint8_t> *out);

} // namespace ingot
