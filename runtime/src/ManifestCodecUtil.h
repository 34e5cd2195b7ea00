//===- ManifestCodecUtil.h - Field helpers of the manifest codecs -*- C++ -*-=//
//
// Shared by ManifestCodec.cpp and ManifestLlmCodec.cpp: typed field readers
// that check ranges on top of ProtoWire.h, and the decoding of nested
// messages with the path of a failure ("steps[3].attrs[0]").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ProtoWire.h"

#include "ingot/Manifest.h"

#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace ingot::codecutil {

/// Bitwise equality, so that -0.0 and NaN payloads survive a round trip.
inline bool sameBits(double a, double b) {
  return !std::memcmp(&a, &b, sizeof a);
}

inline bool readDType(proto::Reader &r, uint32_t type, DType *t) {
  uint32_t v;
  if (!proto::readU32(r, type, &v))
    return false;
  if (!isValidDType(v))
    return r.fail("invalid dtype");
  *t = DType(v);
  return true;
}

/// Packed varints appended to *out as T (uint32_t or int32_t); a value
/// outside T fails with `rangeError`.
template <typename T>
bool readPackedNarrow(proto::Reader &r, uint32_t type, std::vector<T> *out,
                      const char *rangeError) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  std::vector<Wide> wide;
  if (!r.repeatedVarint(type, &wide))
    return false;
  out->reserve(out->size() + wide.size());
  for (Wide v : wide) {
    bool outside = v > Wide(std::numeric_limits<T>::max());
    if constexpr (std::is_signed_v<T>)
      outside = outside || v < Wide(std::numeric_limits<T>::min());
    if (outside)
      return r.fail(rangeError);
    out->push_back(T(v));
  }
  return true;
}

/// Decodes a nested message into a fresh element of `list`; on failure
/// records where (`name` + "[i]" + the element's own where) and the reason.
template <typename T, typename Fn>
bool decodeElement(proto::Reader &r, uint32_t type, std::vector<T> &list,
                   const char *name, std::string *where, Fn decode) {
  proto::Reader sub(nullptr, 0);
  if (!proto::readSub(r, type, &sub))
    return false;
  list.emplace_back();
  std::string inner;
  if (!decode(sub, &list.back(), &inner)) {
    *where =
        std::string(name) + "[" + std::to_string(list.size() - 1) + "]" + inner;
    return r.fail(sub.error());
  }
  return true;
}

/// Decodes a singular nested message; on failure records `name` + where.
template <typename T, typename Fn>
bool decodeSingle(proto::Reader &r, uint32_t type, T *msg, const char *name,
                  std::string *where, Fn decode) {
  proto::Reader sub(nullptr, 0);
  if (!proto::readSub(r, type, &sub))
    return false;
  std::string inner;
  if (!decode(sub, msg, &inner)) {
    *where = name + inner;
    return r.fail(sub.error());
  }
  return true;
}

} // namespace ingot::codecutil
