//===- MiniFloat.cpp - ONNX's float8, float4 and narrow integer types -----===//

#include "ingot/MiniFloat.h"

#include <algorithm>
#include <cmath>

namespace ingot {
namespace {

/// How a narrow float spends its special encodings.
enum class Specials {
  Fn,   // no infinity; S.1111.111 is NaN (e4m3fn)
  Ieee, // all-ones exponent: infinity (mantissa 0) or NaN (e5m2)
  Fnuz, // no infinity, no -0; 0x80 is the one NaN
  None, // no infinity, no NaN (e2m1)
};

struct Layout {
  int exponentBits, mantissaBits, bias;
  Specials specials;

  uint8_t signBit() const {
    return uint8_t(1u << (exponentBits + mantissaBits));
  }
  int exponentMask() const { return (1 << exponentBits) - 1; }
  int mantissaMask() const { return (1 << mantissaBits) - 1; }
  /// The largest finite value's exponent field and mantissa.
  void maxFinite(int &e, int &m) const {
    e = exponentMask(), m = mantissaMask();
    if (specials == Specials::Fn)
      m -= 1;
    else if (specials == Specials::Ieee)
      e -= 1;
  }
  double maxValue() const {
    int e, m;
    maxFinite(e, m);
    return std::ldexp(1.0 + std::ldexp(m, -mantissaBits), e - bias);
  }
};

Layout layoutOf(DType t) {
  switch (t) {
  case DType::F8E4M3FN:
    return {4, 3, 7, Specials::Fn};
  case DType::F8E4M3FNUZ:
    return {4, 3, 8, Specials::Fnuz};
  case DType::F8E5M2:
    return {5, 2, 15, Specials::Ieee};
  case DType::F8E5M2FNUZ:
    return {5, 2, 16, Specials::Fnuz};
  default: // F4E2M1
    return {2, 1, 1, Specials::None};
  }
}

uint8_t nanBits(const Layout &l, bool negative) {
  const uint8_t sign = negative ? l.signBit() : 0;
  switch (l.specials) {
  case Specials::Fn:
    return uint8_t(sign | (l.signBit() - 1));
  case Specials::Ieee: // the quiet NaN: top mantissa bit set
    return uint8_t(sign | (l.exponentMask() << l.mantissaBits) |
                   (1 << (l.mantissaBits - 1)));
  case Specials::Fnuz:
    return 0x80;
  case Specials::None: // no NaN: ml_dtypes gives -0, or +0 for a -NaN
    return negative ? 0x00 : 0x08;
  }
  return 0;
}

/// |v| (finite, not NaN) encoded, the value already on the format's grid
/// and at most its largest finite value.
uint8_t encodeMagnitude(const Layout &l, double r) {
  const int minExponent = 1 - l.bias;
  int e;
  std::frexp(r, &e);
  e -= 1;              // r = 1.f * 2^e
  if (e < minExponent) // subnormal: a multiple of the smallest step
    return uint8_t(std::ldexp(r, l.mantissaBits - minExponent));
  const int mantissa =
      int(std::ldexp(r, l.mantissaBits - e)) - (1 << l.mantissaBits);
  return uint8_t(((e + l.bias) << l.mantissaBits) | mantissa);
}

} // namespace

bool isMiniFloat(DType t) {
  return t == DType::F8E4M3FN || t == DType::F8E4M3FNUZ || t == DType::F8E5M2 ||
         t == DType::F8E5M2FNUZ || t == DType::F4E2M1;
}

double miniFloatToDouble(DType t, uint8_t bits) {
  const Layout l = layoutOf(t);
  const bool negative = bits & l.signBit();
  const int e = (bits >> l.mantissaBits) & l.exponentMask();
  const int m = bits & l.mantissaMask();
  if (l.specials == Specials::Fnuz && bits == 0x80)
    return std::nan("");
  if (l.specials == Specials::Fn && e == l.exponentMask() &&
      m == l.mantissaMask())
    return std::nan("");
  if (l.specials == Specials::Ieee && e == l.exponentMask())
    return m ? std::nan("") : (negative ? -INFINITY : INFINITY);
  const double magnitude =
      e == 0 ? std::ldexp(m, 1 - l.bias - l.mantissaBits)
             : std::ldexp(1.0 + std::ldexp(m, -l.mantissaBits), e - l.bias);
  return negative ? -magnitude : magnitude;
}

uint8_t doubleToMiniFloat(DType t, double v, bool saturate) {
  const Layout l = layoutOf(t);
  const bool negative = std::signbit(v);
  if (std::isnan(v))
    return nanBits(l, negative);
  double r = INFINITY;
  if (std::isfinite(v)) {
    // Round |v| to the grid around it: the step is 2^(e - mantissaBits),
    // subnormals sharing the smallest normal's step. Scaling by a power of
    // two is exact, so nearbyint's ties-to-even is the only rounding.
    const double a = std::fabs(v);
    int e = 1 - l.bias;
    if (a > 0) {
      int fe;
      std::frexp(a, &fe);
      e = std::max(e, fe - 1);
    }
    const int stepExponent = e - l.mantissaBits;
    r = std::ldexp(std::nearbyint(std::ldexp(a, -stepExponent)), stepExponent);
  }
  const uint8_t sign = negative ? l.signBit() : 0;
  if (r > l.maxValue()) {
    if (saturate || l.specials == Specials::None)
      return uint8_t(sign | encodeMagnitude(l, l.maxValue()));
    if (l.specials == Specials::Ieee)
      return uint8_t(sign | (l.exponentMask() << l.mantissaBits));
    return nanBits(l, negative);
  }
  if (r == 0)
    return l.specials == Specials::Fnuz ? 0 : sign;
  return uint8_t(sign | encodeMagnitude(l, r));
}

bool isNarrowInt(DType t) {
  return t == DType::I4 || t == DType::U4 || t == DType::I2 || t == DType::U2;
}

namespace {
int narrowBits(DType t) { return t == DType::I4 || t == DType::U4 ? 4 : 2; }
bool narrowSigned(DType t) { return t == DType::I4 || t == DType::I2; }
} // namespace

int64_t narrowIntValue(DType t, uint8_t bits) {
  const int n = narrowBits(t);
  const int64_t v = bits & ((1 << n) - 1);
  return narrowSigned(t) && (v >> (n - 1)) ? v - (int64_t(1) << n) : v;
}

uint8_t narrowIntWrap(DType t, int64_t v) {
  return uint8_t(uint64_t(v) & ((1u << narrowBits(t)) - 1));
}

uint8_t narrowIntFromDouble(DType t, double v) {
  const int n = narrowBits(t);
  const double lo = narrowSigned(t) ? -double(1 << (n - 1)) : 0.0;
  const double hi =
      narrowSigned(t) ? double((1 << (n - 1)) - 1) : double((1 << n) - 1);
  const double truncated = std::trunc(v); // NaN stays NaN: fails both tests
  if (!(truncated >= lo && truncated <= hi))
    return 0;
  return narrowIntWrap(t, int64_t(truncated));
}

} // namespace ingot
