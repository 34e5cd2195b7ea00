// RUN: ingot-opt %s --ingot-plan-memory | FileCheck %s
// RUN: ingot-opt %s --ingot-plan-memory=keep-apart=silu_mul | FileCheck %s --check-prefix=APART
// RUN: ingot-opt %s --ingot-plan-memory=keep-apart=gelu,exp | FileCheck %s

// keep-apart: a kernel the kernel table lets write over an input gets its
// own memory (the compiler asks this for silu_mul when a CUDA target is
// built: CUDA's silu_mul over its packed input is serial). Other in-place
// kernels are unaffected, and naming kernels the plan does not use changes
// nothing (the third RUN line: the default's numbers).
//
// matmul -> g [8x16] (512 B) -> silu_mul -> y [8x8] (256 B) -> relu -> z.
//   default: y takes g's slice (g dies at the silu_mul) and z takes y's:
//            one 512 B group, arena 512, naive 1024.
//   apart:   g [0,1] at 0; y [1,2] and z [2,3] (relu still in place) share
//            one 256 B group that lives beside g at step 1: offset 512,
//            arena 768 = the peak (g + y at step 1).
// CHECK-LABEL: func.func @packed_silu_mul
// CHECK-SAME:    plan.arena_bytes = 512 : i64
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 16>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}

// APART-LABEL: func.func @packed_silu_mul
// APART-SAME:    plan.arena_bytes = 768 : i64, plan.arena_lower_bound_bytes = 768 : i64, plan.arena_naive_bytes = 1024 : i64
// APART-NEXT:    plan.alloc {max_shape = array<i64: 8, 16>, offset = 0 : i64}
// APART-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 512 : i64}
// APART-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 512 : i64}
func.func @packed_silu_mul(%x: memref<8x8xf32>, %w: memref<8x16xf32>) -> memref<8x8xf32> {
  %g = plan.alloc {max_shape = array<i64: 8, 16>} : memref<8x16xf32>
  %y = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %z = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  plan.kernel "matmul" ins(%x, %w : memref<8x8xf32>, memref<8x16xf32>) outs(%g : memref<8x16xf32>) {args = {}, origin = "mm0"}
  plan.kernel "silu_mul" ins(%g : memref<8x16xf32>) outs(%y : memref<8x8xf32>) {args = {}, origin = "act0"}
  plan.kernel "relu" ins(%y : memref<8x8xf32>) outs(%z : memref<8x8xf32>) {args = {}, origin = "relu0"}
  return %z : memref<8x8xf32>
}
