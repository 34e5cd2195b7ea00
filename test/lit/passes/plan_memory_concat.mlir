// RUN: ingot-opt %s --split-input-file --ingot-plan-memory | FileCheck %s
// RUN: ingot-opt %s --split-input-file --ingot-plan-memory=concat-in-place=false | FileCheck %s --check-prefix=APART

// --ingot-plan-memory places a concat's inputs inside its output when each
// is one contiguous run of it (static shapes, only 1s before the axis), so
// their producers write there and the concat kernel finds nothing to copy.
// An input stays apart when its slab is not 64-byte aligned, or when it is
// read after the output's last reader (the output's slice must cover it).
// Offsets worked out by hand; matmul is not in place.

// a and b at 0 and 64 inside c (128 B): one 128 B group live from step 0
// to the end. Apart: c at 0, a and b above it; arena 256.
// CHECK-LABEL: func.func @concat_inputs_in_place
// CHECK-SAME:    plan.arena_bytes = 128 : i64, plan.arena_lower_bound_bytes = 128 : i64, plan.arena_naive_bytes = 256 : i64
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 64 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 32>, offset = 0 : i64}
// APART-LABEL: func.func @concat_inputs_in_place
// APART-SAME:    plan.arena_bytes = 256 : i64
// APART-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 128 : i64}
// APART-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 192 : i64}
// APART-NEXT:    plan.alloc {max_shape = array<i64: 1, 32>, offset = 0 : i64}
func.func @concat_inputs_in_place(%x: memref<1x8xf32>, %w: memref<8x16xf32>) -> memref<1x32xf32> {
  %a = plan.alloc {max_shape = array<i64: 1, 16>} : memref<1x16xf32>
  %b = plan.alloc {max_shape = array<i64: 1, 16>} : memref<1x16xf32>
  %c = plan.alloc {max_shape = array<i64: 1, 32>} : memref<1x32xf32>
  plan.kernel "matmul" ins(%x, %w : memref<1x8xf32>, memref<8x16xf32>) outs(%a : memref<1x16xf32>) {args = {}, origin = "mm0"}
  plan.kernel "matmul" ins(%x, %w : memref<1x8xf32>, memref<8x16xf32>) outs(%b : memref<1x16xf32>) {args = {}, origin = "mm1"}
  plan.kernel "concat" ins(%a, %b : memref<1x16xf32>, memref<1x16xf32>) outs(%c : memref<1x32xf32>) {args = {axis = 1 : i64}, origin = "cat"}
  return %c : memref<1x32xf32>
}

// -----

// NEGATIVE: two rows before the axis interleave a's and b's runs in c.
// CHECK-LABEL: func.func @rows_before_the_axis
// CHECK-SAME:    plan.arena_bytes = 512 : i64
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 2, 16>, offset = 256 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 2, 16>, offset = 384 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 2, 32>, offset = 0 : i64}
func.func @rows_before_the_axis(%x: memref<2x8xf32>, %w: memref<8x16xf32>) -> memref<2x32xf32> {
  %a = plan.alloc {max_shape = array<i64: 2, 16>} : memref<2x16xf32>
  %b = plan.alloc {max_shape = array<i64: 2, 16>} : memref<2x16xf32>
  %c = plan.alloc {max_shape = array<i64: 2, 32>} : memref<2x32xf32>
  plan.kernel "matmul" ins(%x, %w : memref<2x8xf32>, memref<8x16xf32>) outs(%a : memref<2x16xf32>) {args = {}, origin = "mm0"}
  plan.kernel "matmul" ins(%x, %w : memref<2x8xf32>, memref<8x16xf32>) outs(%b : memref<2x16xf32>) {args = {}, origin = "mm1"}
  plan.kernel "concat" ins(%a, %b : memref<2x16xf32>, memref<2x16xf32>) outs(%c : memref<2x32xf32>) {args = {axis = 1 : i64}, origin = "cat"}
  return %c : memref<2x32xf32>
}

// -----

// NEGATIVE for a: the add reads it after mm2, c's last reader, so a keeps
// its own slice (which the add's e then takes in place); b lies in c.
// CHECK-LABEL: func.func @input_outlives_the_output
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 128 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 64 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 32>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 192 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 16>, offset = 128 : i64}
func.func @input_outlives_the_output(%x: memref<1x8xf32>, %w: memref<8x16xf32>, %v: memref<32x16xf32>) -> (memref<1x16xf32>, memref<1x16xf32>) {
  %a = plan.alloc {max_shape = array<i64: 1, 16>} : memref<1x16xf32>
  %b = plan.alloc {max_shape = array<i64: 1, 16>} : memref<1x16xf32>
  %c = plan.alloc {max_shape = array<i64: 1, 32>} : memref<1x32xf32>
  %d = plan.alloc {max_shape = array<i64: 1, 16>} : memref<1x16xf32>
  %e = plan.alloc {max_shape = array<i64: 1, 16>} : memref<1x16xf32>
  plan.kernel "matmul" ins(%x, %w : memref<1x8xf32>, memref<8x16xf32>) outs(%a : memref<1x16xf32>) {args = {}, origin = "mm0"}
  plan.kernel "matmul" ins(%x, %w : memref<1x8xf32>, memref<8x16xf32>) outs(%b : memref<1x16xf32>) {args = {}, origin = "mm1"}
  plan.kernel "concat" ins(%a, %b : memref<1x16xf32>, memref<1x16xf32>) outs(%c : memref<1x32xf32>) {args = {axis = 1 : i64}, origin = "cat"}
  plan.kernel "matmul" ins(%c, %v : memref<1x32xf32>, memref<32x16xf32>) outs(%d : memref<1x16xf32>) {args = {}, origin = "mm2"}
  plan.kernel "add" ins(%a, %d : memref<1x16xf32>, memref<1x16xf32>) outs(%e : memref<1x16xf32>) {args = {}, origin = "add"}
  return %d, %e : memref<1x16xf32>, memref<1x16xf32>
}

// -----

// NEGATIVE for b: its slab starts 12 bytes into c. a (at 0) lies in c.
// CHECK-LABEL: func.func @unaligned_slab
// CHECK-SAME:    plan.arena_bytes = 128 : i64
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 3>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 3>, offset = 64 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 1, 6>, offset = 0 : i64}
func.func @unaligned_slab(%x: memref<1x8xf32>, %w: memref<8x3xf32>) -> memref<1x6xf32> {
  %a = plan.alloc {max_shape = array<i64: 1, 3>} : memref<1x3xf32>
  %b = plan.alloc {max_shape = array<i64: 1, 3>} : memref<1x3xf32>
  %c = plan.alloc {max_shape = array<i64: 1, 6>} : memref<1x6xf32>
  plan.kernel "matmul" ins(%x, %w : memref<1x8xf32>, memref<8x3xf32>) outs(%a : memref<1x3xf32>) {args = {}, origin = "mm0"}
  plan.kernel "matmul" ins(%x, %w : memref<1x8xf32>, memref<8x3xf32>) outs(%b : memref<1x3xf32>) {args = {}, origin = "mm1"}
  plan.kernel "concat" ins(%a, %b : memref<1x3xf32>, memref<1x3xf32>) outs(%c : memref<1x6xf32>) {args = {axis = -1 : i64}, origin = "cat"}
  return %c : memref<1x6xf32>
}
