//===- KvLayout.h - How the manifest names KV-cache layouts -----*- C++ -*-===//
//
// The compiler picks a KV-cache layout and dtype per target and records
// them in LlmConfig (Manifest.h); the runtime's cache (KvCache.h) stores
// them. Both name and size them here. The layouts and the per-row scales
// of 8-bit caches are described in KvCache.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace ingot {

/// The order of a layer's K (or V) array's dims, outermost first.
enum class KvLayout {
  BlockTokenHeadDim, // "block,token,head,dim": a slot's heads together
  BlockHeadTokenDim, // "block,head,token,dim": a head's block rows together
};

/// The manifest spelling of `layout`.
const char *kvLayoutName(KvLayout layout);
/// False when `name` is no layout this runtime knows (`out` may be null).
bool parseKvLayout(std::string_view name, KvLayout *out);
/// Every known layout, for messages: "'block,token,head,dim', '...'".
std::string knownKvLayouts();

/// Whether this runtime stores a KV cache of `dtype` (float32, bfloat16,
/// int8, fp8).
bool supportedKvDtype(DType dtype);
/// "auto" (keep `fallback`, the artifact's), "float32", "bfloat16" (or
/// "bf16"), "int8" or "fp8":
/// the KV-cache dtype an engine option or flag names; false if none.
bool parseKvCacheDtype(std::string_view name, DType fallback, DType *out);
/// Bytes of one row (one token's values of one KV head), with its scale
/// for the 8-bit dtypes.
uint64_t kvRowBytes(DType dtype, int64_t headDim);

} // namespace ingot
