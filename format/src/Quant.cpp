//===- Quant.cpp - Quantising and dequantising weight rows ----------------===//
//
// The reference for every format of ingot/Quant.h: the compiler quantises
// with it while streaming weights into the artifact, the tests check the
// kernels against rows it dequantises. Scales are rounded to f16 first and
// the values quantised against the rounded scale, so what is stored is
// the best the stored scale can express.
//
//===----------------------------------------------------------------------===//
#include "ingot/Quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace ingot {
namespace {

float bf16ToFloat(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void storeHalf(uint8_t *p, uint16_t h) { std::memcpy(p, &h, 2); }
uint16_t loadHalf(const uint8_t *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

/// Packs g values in 0..15 as runs of kQ4Run (see Quant.h).
void packNibbles(const uint8_t *q, int64_t g, uint8_t *out) {
  for (int64_t r0 = 0; r0 < g; r0 += kQ4Run) {
    const int64_t t = std::min(kQ4Run, g - r0), h = (t + 1) / 2;
    for (int64_t i = 0; i < h; ++i) {
      const uint8_t hi = i + h < t ? q[r0 + i + h] : 0;
      *out++ = uint8_t(q[r0 + i] | (hi << 4));
    }
  }
}

void unpackNibbles(const uint8_t *in, int64_t g, uint8_t *q) {
  for (int64_t r0 = 0; r0 < g; r0 += kQ4Run) {
    const int64_t t = std::min(kQ4Run, g - r0), h = (t + 1) / 2;
    for (int64_t i = 0; i < h; ++i, ++in) {
      q[r0 + i] = *in & 0x0f;
      if (i + h < t)
        q[r0 + i + h] = *in >> 4;
    }
  }
}

/// The f16-rounded scale for `want` (0 stays 0).
float roundedScale(float want, uint16_t *bits) {
  *bits = floatToF16Bits(want);
  return f16BitsToFloat(*bits);
}

int clampRound(float v, int lo, int hi) {
  const float r = std::nearbyint(v);
  return int(std::clamp(r, float(lo), float(hi)));
}

/// `q` is scratch of at least g values (one allocation per row, not per
/// group).
void quantizeGroup(DType t, const float *x, int64_t g, uint8_t *out,
                   uint8_t *q) {
  float amax = 0, lo = x[0], hi = x[0], signedMax = 0;
  for (int64_t i = 0; i < g; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      signedMax = x[i];
    }
  }
  uint16_t dBits = 0;
  uint8_t *payload = out + quantHeaderBytes(t);
  switch (t) {
  case DType::Q8: {
    const float d = roundedScale(amax / 127.0f, &dBits);
    for (int64_t i = 0; i < g; ++i)
      payload[i] =
          d == 0 ? 0 : uint8_t(int8_t(clampRound(x[i] / d, -127, 127)));
    break;
  }
  case DType::Q4: {
    // As Q4_0: the largest magnitude maps to -8 exactly, which spends the
    // 16th level on that side.
    const float d = roundedScale(signedMax / -8.0f, &dBits);
    for (int64_t i = 0; i < g; ++i)
      q[i] = d == 0 ? 8 : uint8_t(clampRound(x[i] / d, -8, 7) + 8);
    packNibbles(q, g, payload);
    break;
  }
  case DType::Q4M: {
    uint16_t mBits = 0;
    const float m = roundedScale(lo, &mBits);
    const float d = roundedScale((hi - m) / 15.0f, &dBits);
    for (int64_t i = 0; i < g; ++i)
      q[i] = d == 0 ? 0 : uint8_t(clampRound((x[i] - m) / d, 0, 15));
    packNibbles(q, g, payload);
    storeHalf(out + 2, mBits);
    break;
  }
  case DType::F8E4M3: {
    const float d = roundedScale(amax / 448.0f, &dBits);
    for (int64_t i = 0; i < g; ++i)
      payload[i] = d == 0 ? 0 : floatToE4m3(x[i] / d);
    break;
  }
  default:
    break;
  }
  storeHalf(out, dBits);
}

void dequantizeGroup(DType t, const uint8_t *in, int64_t g, float *out,
                     uint8_t *q) {
  const float d = f16BitsToFloat(loadHalf(in));
  const uint8_t *payload = in + quantHeaderBytes(t);
  switch (t) {
  case DType::Q8:
    for (int64_t i = 0; i < g; ++i)
      out[i] = d * float(int8_t(payload[i]));
    return;
  case DType::Q4:
    unpackNibbles(payload, g, q);
    for (int64_t i = 0; i < g; ++i)
      out[i] = d * float(int(q[i]) - 8);
    return;
  case DType::Q4M: {
    const float m = f16BitsToFloat(loadHalf(in + 2));
    unpackNibbles(payload, g, q);
    for (int64_t i = 0; i < g; ++i)
      out[i] = std::fma(float(q[i]), d, m); // as the kernels compute it
    return;
  }
  case DType::F8E4M3:
    for (int64_t i = 0; i < g; ++i)
      out[i] = d * e4m3ToFloat(payload[i]);
    return;
  default:
    return;
  }
}

} // namespace

int64_t quantRowBytes(DType t, int64_t k, int64_t group) {
  if (group < 1 || k < 0)
    return 0;
  const int64_t full = k / group, tail = k % group;
  return full * quantBlockBytes(t, group) +
         (tail ? quantBlockBytes(t, tail) : 0);
}

int64_t quantTensorBytes(DType t, int64_t n, int64_t k, int64_t group) {
  if (!isQuantDType(t) || group < 1 || n < 0 || k < 0)
    return -1;
  // Rows hold at most ~1.1 bytes per value plus headers: guard the product.
  if (k > (int64_t(1) << 40) || n > (int64_t(1) << 40))
    return -1;
  const int64_t row = quantRowBytes(t, k, group);
  int64_t total;
  if (__builtin_mul_overflow(row, n, &total))
    return -1;
  return total;
}

double quantBitsPerWeight(DType t, int64_t k, int64_t group) {
  return k > 0 ? 8.0 * double(quantRowBytes(t, k, group)) / double(k) : 0;
}

void quantizeRow(const QuantOptions &o, const float *x, int64_t k, void *dst) {
  auto *out = static_cast<uint8_t *>(dst);
  std::vector<uint8_t> q(static_cast<size_t>(std::min(o.group, k)));
  for (int64_t k0 = 0; k0 < k; k0 += o.group) {
    const int64_t g = std::min(o.group, k - k0);
    quantizeGroup(o.format, x + k0, g, out, q.data());
    out += quantBlockBytes(o.format, g);
  }
}

void dequantizeRow(DType t, int64_t group, const void *src, int64_t k,
                   float *out) {
  const auto *in = static_cast<const uint8_t *>(src);
  std::vector<uint8_t> q(static_cast<size_t>(std::min(group, k)));
  for (int64_t k0 = 0; k0 < k; k0 += group) {
    const int64_t g = std::min(group, k - k0);
    dequantizeGroup(t, in, g, out + k0, q.data());
    in += quantBlockBytes(t, g);
  }
}

Status quantizeTensor(const QuantOptions &o, DType elemType, const void *src,
                      int64_t n, int64_t k, void *dst) {
  if (!isQuantDType(o.format) || o.group < 1)
    return Status::error("invalid quantisation format or group size " +
                         std::to_string(o.group));
  if (elemType != DType::F32 && elemType != DType::F16 &&
      elemType != DType::BF16)
    return Status::error(std::string("cannot quantise ") + dtypeName(elemType) +
                         " values; expected float32, "
                         "float16 or bfloat16");
  std::vector<float> row(static_cast<size_t>(k));
  const int64_t rowBytes = quantRowBytes(o.format, k, o.group);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c) {
      const int64_t i = r * k + c;
      float v;
      if (elemType == DType::F32)
        std::memcpy(&v, static_cast<const float *>(src) + i, 4);
      else if (elemType == DType::BF16)
        v = bf16ToFloat(static_cast<const uint16_t *>(src)[i]);
      else
        v = f16BitsToFloat(static_cast<const uint16_t *>(src)[i]);
      if (!std::isfinite(v))
        return Status::error("non-finite value " + std::to_string(v) + " at [" +
                             std::to_string(r) + ", " + std::to_string(c) +
                             "]: cannot quantise");
      row[size_t(c)] = v;
    }
    quantizeRow(o, row.data(), k, static_cast<uint8_t *>(dst) + r * rowBytes);
  }
  return Status::ok();
}

uint8_t floatToE4m3(float f) {
  if (std::isnan(f))
    return 0x7f;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  if (a >= 448.0f)
    return sign | 0x7e;
  if (a < std::ldexp(1.0f, -6)) {
    // Subnormal: multiples of 2^-9; 8 of them is the smallest normal,
    // whose code is 8 as well.
    const int m = int(std::nearbyint(std::ldexp(a, 9)));
    return sign | uint8_t(m);
  }
  int e;
  const float frac = std::frexp(a, &e); // a = frac * 2^e, frac in [0.5, 1)
  int m = int(std::nearbyint((frac * 2.0f - 1.0f) * 8.0f));
  int exp = e - 1 + 7;
  if (m == 8) {
    m = 0;
    ++exp;
  }
  if (exp > 15 || (exp == 15 && m == 7))
    return sign | 0x7e;
  return sign | uint8_t(exp << 3 | m);
}

float e4m3ToFloat(uint8_t v) {
  const int e = (v >> 3) & 15, m = v & 7;
  float a;
  if (e == 15 && m == 7)
    a = std::numeric_limits<float>::quiet_NaN();
  else if (e == 0)
    a = std::ldexp(float(m), -9);
  else
    a = std::ldexp(1.0f + float(m) / 8.0f, e - 7);
  return (v & 0x80) ? -a : a;
}

float f16BitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (mant << 13); // inf / NaN
  } else if (exp != 0) {
    u = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    u = sign;
  } else { // subnormal half: normalise
    int shift = 0;
    while (!(mant & 0x400)) {
      mant <<= 1;
      ++shift;
    }
    mant &= 0x3ff;
    u = sign | (uint32_t(113 - shift) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToF16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t absU = u & 0x7fffffffu;
  if (absU > 0x7f800000u)
    return sign | 0x7e00; // NaN
  if (absU >= 0x477ff000u)
    return sign | 0x7c00; // rounds to inf
  if (absU < 0x38800000u) {
    // Result is subnormal (or zero): align the implicit-1 mantissa to the
    // half subnormal step 2^-24 and round to nearest even.
    if (absU < 0x33000000u)
      return sign; // below half the smallest subnormal
    uint32_t exp = absU >> 23;
    uint32_t mant = (absU & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - exp; // 14..24 bits
    uint32_t q = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1)))
      ++q;
    return sign | uint16_t(q);
  }
  // Normal: rebias and round the 13 dropped bits to nearest even.
  uint32_t v = absU - (112u << 23);
  v += 0xfffu + ((v >> 13) & 1);
  return sign | uint16_t(v >> 13);
}

} // namespace ingot
