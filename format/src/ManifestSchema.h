//===- ManifestSchema.h - Generated manifest tables (private) ---*- C++ -*-===//
//
// The C++ flatc generates at build time from format/schema/manifest.fbs
// (format/CMakeLists.txt), in namespace ingot::fb, plus the limits the
// decoder holds hostile manifests to.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "manifest_generated.h"

#include <cstddef>

namespace ingot::fb {

/// The largest manifest decodeManifest reads. Far above any real model (a
/// 256k-token vocabulary is a few MiB) and below FlatBuffers' 2 GiB limit.
constexpr size_t kMaxManifestBytes = size_t(1) << 30;
/// Nesting of tables: Manifest > Step > Attr is 3 deep.
constexpr unsigned kMaxManifestDepth = 8;
/// Every table the encoder writes owns at least the 4 bytes of its vtable
/// offset, so a manifest of N bytes has at most N / 4 of them; more means
/// tables referenced many times over, which would multiply decoding work.
constexpr size_t kManifestBytesPerTable = 4;

} // namespace ingot::fb
