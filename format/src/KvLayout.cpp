//===- KvLayout.cpp - KV-cache layout and dtype names -----------------===//
#include "ingot/KvLayout.h"

#include <algorithm>
#include <utility>

namespace ingot {
namespace {

constexpr std::pair<KvLayout, const char *> kLayouts[] = {
    {KvLayout::BlockTokenHeadDim, "block,token,head,dim"},
    {KvLayout::BlockHeadTokenDim, "block,head,token,dim"},
};

} // namespace

bool supportedKvDtype(DType dtype) {
  return dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::I8 ||
         dtype == DType::F8E4M3;
}

bool parseKvCacheDtype(std::string_view name, DType fallback, DType *out) {
  if (name == "auto")
    *out = fallback;
  else if (name == "float32" || name == "f32")
    *out = DType::F32;
  else if (name == "bfloat16" || name == "bf16")
    *out = DType::BF16;
  else if (name == "int8")
    *out = DType::I8;
  else if (name == "fp8" || name == "fp8_e4m3")
    *out = DType::F8E4M3;
  else
    return false;
  return true;
}

uint64_t kvRowBytes(DType dtype, int64_t headDim) {
  const uint64_t d = uint64_t(std::max<int64_t>(headDim, 0));
  if (dtype == DType::F32)
    return d * sizeof(float);
  if (dtype == DType::BF16)
    return d * sizeof(uint16_t);
  return d + sizeof(float);
}

const char *kvLayoutName(KvLayout layout) {
  for (auto [l, name] : kLayouts)
    if (l == layout)
      return name;
  return "?";
}

bool parseKvLayout(std::string_view name, KvLayout *out) {
  for (auto [l, n] : kLayouts)
    if (name == n) {
      if (out)
        *out = l;
      return true;
    }
  return false;
}

std::string knownKvLayouts() {
  std::string s;
  for (auto [l, name] : kLayouts)
    s.append(s.empty() ? "'" : ", '").append(name).append("'");
  return s;
}

} // namespace ingot
