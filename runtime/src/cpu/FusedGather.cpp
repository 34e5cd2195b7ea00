//===- FusedGather.cpp - Broadcast inputs of a fused region ---------------===//
#include "cpu/FusedGather.h"

#include "cpu/KernelUtil.h"

#include <algorithm>
#include <cstring>

namespace ingot::cpu {

/// The output's dims with size-1 dims dropped and neighbours merged where
/// every input stays contiguous across them, and each input's strides.
void planWalks(const shape::Shape &out, std::vector<InputWalk> &walks,
               const std::vector<const shape::Shape *> &shapes,
               std::vector<int64_t> &dims) {
  const size_t r = out.size();
  std::vector<std::vector<int64_t>> full(walks.size(),
                                         std::vector<int64_t>(r, 0));
  for (size_t k = 0; k < walks.size(); ++k) {
    const shape::Shape &s = *shapes[k];
    int64_t stride = 1;
    for (size_t j = 0; j < s.size(); ++j) {
      size_t d = s.size() - 1 - j, o = r - 1 - j;
      full[k][o] = s[d] == 1 ? 0 : stride;
      stride *= s[d];
    }
  }
  dims.clear();
  for (size_t o = 0; o < r; ++o) {
    if (out[o] == 1)
      continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < walks.size(); ++k)
      merge = walks[k].strides.back() == full[k][o] * out[o];
    if (merge) {
      dims.back() *= out[o];
      for (size_t k = 0; k < walks.size(); ++k)
        walks[k].strides.back() = full[k][o];
      continue;
    }
    dims.push_back(out[o]);
    for (size_t k = 0; k < walks.size(); ++k)
      walks[k].strides.push_back(full[k][o]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (InputWalk &w : walks)
      w.strides.push_back(0);
  }
}

/// Copies output elements [begin, begin + n) of a broadcast input to dst.
/// Cloned per ISA: filling a broadcast value's runs (BN's per-channel
/// scales over small planes) was 18% of ppocr-cls's regions at SSE width.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
gather(const InputWalk &w, const std::vector<int64_t> &dims, int64_t begin,
       int64_t n, float *dst) {
  const int r = static_cast<int>(dims.size());
  int64_t idx[kMaxRank * 2];
  int64_t off = 0, rem = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % dims[d];
    rem /= dims[d];
    off += idx[d] * w.strides[d];
  }
  const int64_t inner = w.strides[r - 1];
  for (int64_t done = 0; done < n;) {
    int64_t run = std::min(dims[r - 1] - idx[r - 1], n - done);
    const float *src = w.data + off;
    if (inner == 1)
      std::memcpy(dst + done, src, run * sizeof(float));
    else
      std::fill(dst + done, dst + done + run, *src);
    done += run;
    idx[r - 1] += run;
    off += run * inner;
    for (int d = r - 1; d > 0 && idx[d] == dims[d]; --d) {
      idx[d] = 0;
      off += w.strides[d - 1] - dims[d] * w.strides[d];
      ++idx[d - 1];
    }
  }
}

} // namespace ingot::cpu
