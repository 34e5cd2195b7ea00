//===- FloatEnvironment.h - Denormal flushing for kernel threads -*- C++
//-*-===//
//
// A subnormal operand costs an x86 core a microcode assist of ~100 cycles
// per instruction: a SiLU network fed noise (YOLOv8) makes tiny activations
// that slowed its GEMMs 12x. Kernels therefore run with flush-to-zero and
// denormals-are-zero set, as TensorRT and onnxruntime's MLAS kernels avoid
// them; values below 1.2e-38 read and write as 0. The caller's control
// word is restored after each run, and pool workers take the caller's word
// for each job, so results never depend on which thread ran a chunk.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define INGOT_HAS_MXCSR 1
#endif

namespace ingot {

/// The calling thread's SSE control word (0 where there is none).
inline uint32_t floatControl() {
#ifdef INGOT_HAS_MXCSR
  return _mm_getcsr();
#else
  return 0;
#endif
}

inline void setFloatControl(uint32_t word) {
#ifdef INGOT_HAS_MXCSR
  _mm_setcsr(word);
#else
  (void)word;
#endif
}

/// Flush-to-zero (bit 15) and denormals-are-zero (bit 6).
constexpr uint32_t kFlushDenormalBits = 0x8040;

/// Sets (or, with `flush` false, clears) the flush bits on this thread for
/// its lifetime.
class ScopedFloatControl {
public:
  explicit ScopedFloatControl(bool flush) : saved_(floatControl()) {
    setFloatControl(flush ? saved_ | kFlushDenormalBits
                          : saved_ & ~kFlushDenormalBits);
  }
  explicit ScopedFloatControl(uint32_t word) : saved_(floatControl()) {
    setFloatControl(word);
  }
  ~ScopedFloatControl() { setFloatControl(saved_); }
  ScopedFloatControl(const ScopedFloatControl &) = delete;
  ScopedFloatControl &operator=(const ScopedFloatControl &) = delete;

private:
  uint32_t saved_;
};

} // namespace ingot
