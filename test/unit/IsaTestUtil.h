//===- IsaTestUtil.h - The instruction sets this CPU runs -------*- C++ -*-===//
//
// Tests that run every ISA's build of a kernel (and compare them) loop
// over these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/Gemm.h"

#include <vector>

namespace ingot::test {

/// Generic, AVX2 and AVX-512, those this CPU supports, in that order.
inline std::vector<cpu::GemmIsa> supportedIsas() {
  std::vector<cpu::GemmIsa> isas;
  for (cpu::GemmIsa isa :
       {cpu::GemmIsa::Generic, cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512})
    if (cpu::gemmIsaSupported(isa))
      isas.push_back(isa);
  return isas;
}

} // namespace ingot::test
