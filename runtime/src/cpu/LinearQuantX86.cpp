//===- LinearQuantX86.cpp - AVX2 weight-only quantised linear -------------===//
//
// The kernel of LinearQuantX86.inc compiled for AVX2 + FMA + F16C. AVX-512
// machines use it too: its 8-lane chains define the result bits, and decode
// is bound by the weight reads, not by the vector width.
// Called only after CPUID reported the features (bestQuantLinearKernels).
//
//===----------------------------------------------------------------------===//

#include "cpu/LinearQuant.h"
#include "cpu/LinearQuantUtil.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

namespace ingot::cpu {

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
namespace avx2q {
namespace {
#include "cpu/LinearQuantX86.inc"
} // namespace
} // namespace avx2q
#pragma GCC pop_options

const QuantLinearKernels &avx2QuantLinearKernels() {
  static const QuantLinearKernels set{avx2q::nk, "avx2"};
  return set;
}

} // namespace ingot::cpu
