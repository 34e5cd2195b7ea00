//===- LinearQ16.cpp - Activation quantiser, portable "q16" kernel, ISA ---===//
//
// The portable kernel performs the x86 kernels' arithmetic one output row
// at a time (LinearQ16.h): it is the fallback for CPUs without AVX2 and
// the reference they are tested against bitwise.
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearQ16.h"

#include "cpu/KernelUtil.h"
#include "cpu/LinearQuant.h"
#include "ingot/Quant.h"
#include "ingot/WeightLayout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ingot::cpu {

void QuantizedRows::resize(int64_t rows, int64_t cols) {
  k = cols;
  q.resize(size_t(rows * cols));
  d.resize(size_t(rows * (cols / kQ16Block)));
  sum.resize(d.size());
}

void quantizeRowsQ8(const float *x, int64_t r0, int64_t r1,
                    QuantizedRows &out) {
  const int64_t k = out.k, blocks = k / kQ16Block;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const float *v = x + r * k + b * kQ16Block;
      float amax = 0.0f;
      for (int64_t i = 0; i < kQ16Block; ++i)
        amax = std::max(amax, std::fabs(v[i]));
      const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
      int8_t *q = out.q.data() + r * k + b * kQ16Block;
      int32_t s = 0;
      for (int64_t i = 0; i < kQ16Block; ++i) {
        const float t = std::clamp(std::nearbyint(v[i] * inv), -127.0f, 127.0f);
        q[i] = int8_t(t);
        s += q[i];
      }
      out.d[size_t(r * blocks + b)] = amax / 127.0f;
      out.sum[size_t(r * blocks + b)] = s;
    }
}

namespace {

float readHalf(const uint8_t *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return halfToFloat(h);
}

/// Stored value v of row r in a "q16" block payload: a q8 value (kept
/// + 128, WeightLayout.h), an int4 nibble raw (0..15).
int32_t q16Value(DType t, const uint8_t *payload, int64_t r, int64_t v) {
  if (t == DType::Q8)
    return int32_t(payload[(v / 4) * 64 + 4 * r + v % 4]) - 128;
  const int64_t within = v % 8;
  const uint8_t byte = payload[(v / 8) * 64 + 4 * r + within % 4];
  return within >= 4 ? byte >> 4 : byte & 0x0f;
}

void nkGeneric(const Q16LinearArgs &a, int64_t r0, int64_t r1, int64_t n0,
               int64_t n1) {
  const DType t = a.wType;
  const bool perRow = t == DType::Q8 && a.group == a.k;
  const int64_t blocks = a.k / kQ16Block, hdr = quantHeaderBytes(t);
  const int64_t rowBytes = quantRowBytes(t, a.k, a.group);
  // Where x block b's weights start in a panel: a header and 32 values
  // per block, or (per channel) the panel's headers, then all values.
  const int64_t stride = perRow ? 32 * kQ16PanelRows
                                : kQ16PanelRows * quantBlockBytes(t, kQ16Block);
  const int64_t skip = perRow ? kQ16PanelRows * hdr : 0;
  for (int64_t j = n0; j < n1; ++j) {
    const int64_t lane = j % kQ16PanelRows;
    const uint8_t *panel = a.w + (j - lane) * rowBytes;
    for (int64_t r = r0; r < r1; ++r) {
      const int8_t *xq = a.x->q.data() + r * a.k;
      float acc = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t *o = panel + skip + b * stride;
        const uint8_t *payload = perRow ? o : o + kQ16PanelRows * hdr;
        const float dx = a.x->d[size_t(r * blocks + b)];
        const int32_t sx = a.x->sum[size_t(r * blocks + b)];
        int32_t isum = t == DType::Q4 ? -8 * sx : 0;
        for (int64_t v = 0; v < kQ16Block; ++v)
          isum += q16Value(t, payload, lane, v) * xq[b * kQ16Block + v];
        if (perRow) {
          acc = std::fma(float(isum), dx, acc);
          continue;
        }
        acc = std::fma(float(isum), readHalf(o + 2 * lane) * dx, acc);
        if (t == DType::Q4M)
          acc = std::fma(readHalf(o + 32 + 2 * lane), dx * float(sx), acc);
      }
      if (perRow)
        acc *= readHalf(panel + 2 * lane);
      a.y[r * a.n + j] = a.bias ? acc + a.bias[j] : acc;
    }
  }
}

} // namespace

const Q16LinearKernels &genericQ16LinearKernels() {
  static const Q16LinearKernels set{nkGeneric, quantizeRowsQ8, "generic"};
  return set;
}

const Q16LinearKernels &bestQ16LinearKernels() {
  switch (bestQuantIsa()) {
  case GemmIsa::Avx512:
    if (__builtin_cpu_supports("avx512vnni"))
      return avx512VnniQ16LinearKernels();
    [[fallthrough]];
  case GemmIsa::Avx2:
    return avx2Q16LinearKernels();
  case GemmIsa::Generic:
    break;
  }
  return genericQ16LinearKernels();
}

} // namespace ingot::cpu
