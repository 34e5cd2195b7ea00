// RUN: ingot-opt %s --split-input-file --ingot-plan-memory | FileCheck %s
// RUN: ingot-opt %s --split-input-file --ingot-plan-memory=in-place=false | FileCheck %s --check-prefix=NOINPLACE
// RUN: ingot-opt %s --split-input-file --ingot-plan-memory=alignment=128 | FileCheck %s --check-prefix=ALIGN128
// RUN: not ingot-opt %s --split-input-file --ingot-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=BADALIGN
// RUN: not ingot-opt %s --split-input-file --ingot-plan-memory=alignment=32 2>&1 | FileCheck %s --check-prefix=SMALLALIGN

// --ingot-plan-memory on hand-written plan IR. A buffer lives from the step
// that writes it to the last step that reads it (to the end of the plan,
// step N for N kernels, if it is returned); its size is product(max_shape) *
// element bytes rounded up to the alignment. Buffers are placed largest
// first at the lowest offset that fits beside the ones whose lives overlap
// theirs. The numbers below are worked out by hand.
//
// arena_bytes:             the end of the highest placed buffer;
// arena_lower_bound_bytes: max over steps of the bytes live at that step;
// arena_naive_bytes:       the sum of all (aligned) buffer sizes.

// Three non-in-place matmuls, 8x8xf32 = 256 B each; endOfPlan = 3.
//   a: [0,1]   b: [1,2]   c: [2,3] (returned)
// a and c never live at the same time, so c reuses offset 0; b must sit
// beside both. arena 512 = lower bound (a+b at step 1); naive 3*256 = 768.
// matmul is not in-place, so b does not take a's slice although a dies at
// b's step.
// CHECK-LABEL: func.func @disjoint_lifetimes_share_memory
// CHECK-SAME:    attributes {plan.arena_bytes = 512 : i64, plan.arena_lower_bound_bytes = 512 : i64, plan.arena_naive_bytes = 768 : i64}
// CHECK-NEXT:    %[[A:.+]] = plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
// CHECK-NEXT:    %[[B:.+]] = plan.alloc {max_shape = array<i64: 8, 8>, offset = 256 : i64}
// CHECK-NEXT:    %[[C:.+]] = plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}

// NOINPLACE-LABEL: func.func @disjoint_lifetimes_share_memory
// NOINPLACE-SAME:    attributes {plan.arena_bytes = 512 : i64, plan.arena_lower_bound_bytes = 512 : i64, plan.arena_naive_bytes = 768 : i64}
func.func @disjoint_lifetimes_share_memory(%x: memref<8x8xf32>, %w: memref<8x8xf32>) -> memref<8x8xf32> {
  %a = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %b = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %c = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  plan.kernel "matmul" ins(%x, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%a : memref<8x8xf32>) {args = {}, origin = "mm0"}
  plan.kernel "matmul" ins(%a, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%b : memref<8x8xf32>) {args = {}, origin = "mm1"}
  plan.kernel "matmul" ins(%b, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {args = {}, origin = "mm2"}
  return %c : memref<8x8xf32>
}

// -----

// matmul -> relu -> exp: each elementwise step's input dies there, so relu
// writes over a and exp over b. One 256 B slice holds the whole chain:
// arena = lower bound = 256, naive 768.
// Without in-place: a [0,1], b [1,2], c [2,3] as in the first case: 512.
// CHECK-LABEL: func.func @in_place_chain
// CHECK-SAME:    attributes {plan.arena_bytes = 256 : i64, plan.arena_lower_bound_bytes = 256 : i64, plan.arena_naive_bytes = 768 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}

// NOINPLACE-LABEL: func.func @in_place_chain
// NOINPLACE-SAME:    attributes {plan.arena_bytes = 512 : i64, plan.arena_lower_bound_bytes = 512 : i64, plan.arena_naive_bytes = 768 : i64}
// NOINPLACE-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
// NOINPLACE-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 256 : i64}
// NOINPLACE-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
func.func @in_place_chain(%x: memref<8x8xf32>, %w: memref<8x8xf32>) -> memref<8x8xf32> {
  %a = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %b = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %c = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  plan.kernel "matmul" ins(%x, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%a : memref<8x8xf32>) {args = {}, origin = "mm0"}
  plan.kernel "relu" ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {args = {}, origin = "relu0"}
  plan.kernel "exp" ins(%b : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {args = {}, origin = "exp0"}
  return %c : memref<8x8xf32>
}

// -----

// NEGATIVE: a is read again by the add, so relu must not overwrite it. The
// add is the last reader of a, so c may take a's slice there.
//   a: [0,2]  b: [1,2]  c: [2,3], merged with a
// arena = lower bound = 512 (a+b at steps 1 and 2), naive 768.
// CHECK-LABEL: func.func @no_in_place_when_input_used_later
// CHECK-SAME:    attributes {plan.arena_bytes = 512 : i64, plan.arena_lower_bound_bytes = 512 : i64, plan.arena_naive_bytes = 768 : i64}
// CHECK-NEXT:    %[[A:.+]] = plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
// CHECK-NEXT:    %[[B:.+]] = plan.alloc {max_shape = array<i64: 8, 8>, offset = 256 : i64}
// CHECK-NEXT:    %[[C:.+]] = plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
func.func @no_in_place_when_input_used_later(%x: memref<8x8xf32>, %w: memref<8x8xf32>) -> memref<8x8xf32> {
  %a = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %b = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %c = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  plan.kernel "matmul" ins(%x, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%a : memref<8x8xf32>) {args = {}, origin = "mm0"}
  plan.kernel "relu" ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {args = {}, origin = "relu0"}
  plan.kernel "add" ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {args = {}, origin = "add0"}
  return %c : memref<8x8xf32>
}

// -----

// NEGATIVE: a is returned, so it lives to the end of the plan and relu
// cannot write over it. a: [0,2]  b: [1,2]; arena 512 = naive.
// CHECK-LABEL: func.func @no_in_place_when_input_returned
// CHECK-SAME:    attributes {plan.arena_bytes = 512 : i64, plan.arena_lower_bound_bytes = 512 : i64, plan.arena_naive_bytes = 512 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 256 : i64}
func.func @no_in_place_when_input_returned(%x: memref<8x8xf32>, %w: memref<8x8xf32>) -> (memref<8x8xf32>, memref<8x8xf32>) {
  %a = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %b = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  plan.kernel "matmul" ins(%x, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%a : memref<8x8xf32>) {args = {}, origin = "mm0"}
  plan.kernel "relu" ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {args = {}, origin = "relu0"}
  return %a, %b : memref<8x8xf32>, memref<8x8xf32>
}

// -----

// A broadcasting add where both inputs die: the 8-element v (32 B, 64
// aligned) is too small for the 8x8 result, a (256 B) is not, so c takes
// a's slice.
//   a: [0,2] merged with c: [2,3]   v: [1,2]
// arena = lower bound = 256 + 64 = 320; naive 256 + 64 + 256 = 576.
// CHECK-LABEL: func.func @in_place_needs_a_big_enough_input
// CHECK-SAME:    attributes {plan.arena_bytes = 320 : i64, plan.arena_lower_bound_bytes = 320 : i64, plan.arena_naive_bytes = 576 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64} : memref<8x8xf32>
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8>, offset = 256 : i64} : memref<8xf32>
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64} : memref<8x8xf32>
func.func @in_place_needs_a_big_enough_input(%x: memref<8x8xf32>, %w: memref<8x8xf32>) -> memref<8x8xf32> {
  %a = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  %v = plan.alloc {max_shape = array<i64: 8>} : memref<8xf32>
  %c = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  plan.kernel "matmul" ins(%x, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%a : memref<8x8xf32>) {args = {}, origin = "mm0"}
  plan.kernel "reduce_mean" ins(%a : memref<8x8xf32>) outs(%v : memref<8xf32>) {args = {axes = array<i64: 0>, keepdims = 0 : i64}, origin = "mean0"}
  plan.kernel "add" ins(%v, %a : memref<8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {args = {}, origin = "add0"}
  return %c : memref<8x8xf32>
}

// -----

// Sizes come from max_shape: 128x64xf32 = 32768 B, 128x64xi1 = 8192 B (one
// byte per bool). softmax writes over a, which dies there; the cast is not
// in-place and both results are returned.
//   a: [0,1] merged with b: [1,3]   m: [2,3]
// arena = lower bound = 32768 + 8192 = 40960; naive 2*32768 + 8192 = 73728.
// CHECK-LABEL: func.func @bytes_from_max_shape
// CHECK-SAME:    attributes {plan.arena_bytes = 40960 : i64, plan.arena_lower_bound_bytes = 40960 : i64, plan.arena_naive_bytes = 73728 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 128, 64>, offset = 0 : i64} : memref<?x64xf32>
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 128, 64>, offset = 0 : i64} : memref<?x64xf32>
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 128, 64>, offset = 32768 : i64} : memref<?x64xi1>
func.func @bytes_from_max_shape(%x: memref<?x64xf32> {plan.dims = ["seq", ""]}) -> (memref<?x64xf32>, memref<?x64xi1>) {
  %a = plan.alloc {max_shape = array<i64: 128, 64>} : memref<?x64xf32>
  %b = plan.alloc {max_shape = array<i64: 128, 64>} : memref<?x64xf32>
  %m = plan.alloc {max_shape = array<i64: 128, 64>} : memref<?x64xi1>
  plan.kernel "relu" ins(%x : memref<?x64xf32>) outs(%a : memref<?x64xf32>) {args = {}, origin = "relu0"}
  plan.kernel "softmax" ins(%a : memref<?x64xf32>) outs(%b : memref<?x64xf32>) {args = {axis = -1 : i64}, origin = "softmax0"}
  plan.kernel "cast" ins(%b : memref<?x64xf32>) outs(%m : memref<?x64xi1>) {args = {}, origin = "cast0"}
  return %b, %m : memref<?x64xf32>, memref<?x64xi1>
}

// -----

// Largest first is not always optimal. A 16xf32 = 64 B, B 32xf32 = 128 B
// (its result is unused), C 64 B, D 128 B (returned); endOfPlan = 4.
//   A: [0,2]  B: [1,1]  C: [2,3]  D: [3,4]
// Placement order B, D (128 B, by start), A, C (64 B):
//   B -> 0; D -> 0 (B is dead by then); A overlaps B -> 128;
//   C overlaps A [128,192) and D [0,128) -> on top at 192.
// arena 256; lower bound 192 (A+B at step 1, C+D at step 3);
// naive 64 + 128 + 64 + 128 = 384.
// CHECK-LABEL: func.func @largest_first_above_lower_bound
// CHECK-SAME:    attributes {plan.arena_bytes = 256 : i64, plan.arena_lower_bound_bytes = 192 : i64, plan.arena_naive_bytes = 384 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 16>, offset = 128 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 32>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 16>, offset = 192 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 32>, offset = 0 : i64}
func.func @largest_first_above_lower_bound(%x: memref<16xf32>, %y: memref<32xf32>) -> memref<32xf32> {
  %a = plan.alloc {max_shape = array<i64: 16>} : memref<16xf32>
  %b = plan.alloc {max_shape = array<i64: 32>} : memref<32xf32>
  %c = plan.alloc {max_shape = array<i64: 16>} : memref<16xf32>
  %d = plan.alloc {max_shape = array<i64: 32>} : memref<32xf32>
  plan.kernel "transpose" ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) {args = {perm = array<i64>}, origin = "t0"}
  plan.kernel "transpose" ins(%y : memref<32xf32>) outs(%b : memref<32xf32>) {args = {perm = array<i64>}, origin = "t1"}
  plan.kernel "transpose" ins(%a : memref<16xf32>) outs(%c : memref<16xf32>) {args = {perm = array<i64>}, origin = "t2"}
  plan.kernel "concat" ins(%c, %c : memref<16xf32>, memref<16xf32>) outs(%d : memref<32xf32>) {args = {axis = 0 : i64}, origin = "cat"}
  return %d : memref<32xf32>
}

// -----

// 10xf32 = 40 B rounds up to one 64 B unit by default, to 128 B with
// alignment=128. a: [0,1]  b: [1,2] overlap.
//   default:        a -> 0, b -> 64;  arena = lower bound = naive = 128
//   alignment=128:  a -> 0, b -> 128; arena = lower bound = naive = 256
// CHECK-LABEL: func.func @alignment
// CHECK-SAME:    attributes {plan.arena_bytes = 128 : i64, plan.arena_lower_bound_bytes = 128 : i64, plan.arena_naive_bytes = 128 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 10>, offset = 0 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 10>, offset = 64 : i64}

// ALIGN128-LABEL: func.func @alignment
// ALIGN128-SAME:    attributes {plan.arena_bytes = 256 : i64, plan.arena_lower_bound_bytes = 256 : i64, plan.arena_naive_bytes = 256 : i64}
// ALIGN128-NEXT:    plan.alloc {max_shape = array<i64: 10>, offset = 0 : i64}
// ALIGN128-NEXT:    plan.alloc {max_shape = array<i64: 10>, offset = 128 : i64}
func.func @alignment(%x: memref<10xf32>) -> memref<10xf32> {
  %a = plan.alloc {max_shape = array<i64: 10>} : memref<10xf32>
  %b = plan.alloc {max_shape = array<i64: 10>} : memref<10xf32>
  plan.kernel "transpose" ins(%x : memref<10xf32>) outs(%a : memref<10xf32>) {args = {perm = array<i64>}, origin = "t0"}
  plan.kernel "transpose" ins(%a : memref<10xf32>) outs(%b : memref<10xf32>) {args = {perm = array<i64>}, origin = "t1"}
  return %b : memref<10xf32>
}

// -----

// A function without arena buffers records zeros.
// CHECK-LABEL: func.func @no_buffers
// CHECK-SAME:    attributes {plan.arena_bytes = 0 : i64, plan.arena_lower_bound_bytes = 0 : i64, plan.arena_naive_bytes = 0 : i64}
func.func @no_buffers(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}

// The alignment must be a power of two.
// BADALIGN: error: alignment must be a power of two

// Arena offsets must be 64-byte aligned (docs/artifact-format.md, and the
// plan.alloc verifier), so a smaller power of two must be rejected by the
// pass itself instead of producing offsets that fail verification.
// SMALLALIGN-NOT: offset must be a non-negative multiple of 64
// SMALLALIGN:     error: alignment
// SMALLALIGN-NOT: offset must be a non-negative multiple of 64

// -----

// A buffer sized at run time (-1 in max_shape: Range's length is data)
// gets no offset and no arena bytes; the bounded buffer reading it is
// placed as usual, and naive counts only bounded bytes.
// CHECK-LABEL: func.func @sized_at_run_time_stays_out_of_the_arena
// CHECK-SAME:    attributes {plan.arena_bytes = 256 : i64, plan.arena_lower_bound_bytes = 256 : i64, plan.arena_naive_bytes = 256 : i64}
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: -1>} : memref<?xi64>
// CHECK-NEXT:    plan.alloc {max_shape = array<i64: 8, 8>, offset = 0 : i64}
func.func @sized_at_run_time_stays_out_of_the_arena(%s: memref<i64>, %l: memref<i64>, %d: memref<i64>, %x: memref<8x8xf32>) -> (memref<?xi64>, memref<8x8xf32>) {
  %r = plan.alloc {max_shape = array<i64: -1>} : memref<?xi64>
  %y = plan.alloc {max_shape = array<i64: 8, 8>} : memref<8x8xf32>
  plan.kernel "range" ins(%s, %l, %d : memref<i64>, memref<i64>, memref<i64>) outs(%r : memref<?xi64>) {args = {}, origin = "range"}
  plan.kernel "relu" ins(%x : memref<8x8xf32>) outs(%y : memref<8x8xf32>) {args = {}, origin = "relu"}
  return %r, %y : memref<?xi64>, memref<8x8xf32>
}
