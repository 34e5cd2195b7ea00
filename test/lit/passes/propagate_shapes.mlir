// RUN: ingot-opt %s --split-input-file --ingot-propagate-shapes --verify-diagnostics | FileCheck %s
// RUN: ingot-opt %S/Inputs/external_declaration.mlir --ingot-propagate-shapes | FileCheck %s --check-prefix=DECL

// --ingot-propagate-shapes re-infers every result type in program order,
// keeps the most precise dims of the written and the inferred type, and
// lets the function's result types follow.

// A Reshape whose target is a constant becomes static, and so does every
// user downstream, up to the signature.
// CHECK-LABEL: func.func @reshape_target_constant
// CHECK-SAME:    (%[[X:.+]]: tensor<64xf32>) -> tensor<2x32xf32>
// CHECK:         %[[S:.+]] = ingot.constant dense<[2, 32]> : tensor<2xi64>
// CHECK:         %[[R:.+]] = ingot.reshape %[[X]], %[[S]] {allowzero = 0 : i64} : (tensor<64xf32>, tensor<2xi64>) -> tensor<2x32xf32>
// CHECK:         %[[Y:.+]] = ingot.relu %[[R]] : tensor<2x32xf32>
// CHECK:         return %[[Y]] : tensor<2x32xf32>
func.func @reshape_target_constant(%x: tensor<64xf32>) -> tensor<?x?xf32> {
  %s = ingot.constant dense<[2, 32]> : tensor<2xi64>
  %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %y = ingot.relu %r : tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// The attention-head split on symbolic batch and seq: the target
// [batch, seq, 4, 16] is only partly known, and its known entries still fix
// their dims (`?x?x4x16`), through the transpose to the signature. The
// shape ops themselves stay.
// CHECK-LABEL: func.func @split_heads
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32> {ingot.dims = ["batch", "seq", ""]}) -> tensor<?x4x?x16xf32>
// CHECK:         %[[S:.+]] = ingot.shape %[[X]] {end = 2 : i64, start = 0 : i64} : tensor<?x?x64xf32> -> tensor<2xi64>
// CHECK:         %[[H:.+]] = ingot.constant dense<[4, 16]> : tensor<2xi64>
// CHECK:         %[[T:.+]] = ingot.concat %[[S]], %[[H]] {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
// CHECK:         %[[R:.+]] = ingot.reshape %[[X]], %[[T]] {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
// CHECK:         %[[P:.+]] = ingot.transpose %[[R]] {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
// CHECK:         return %[[P]] : tensor<?x4x?x16xf32>
func.func @split_heads(%x: tensor<?x?x64xf32> {ingot.dims = ["batch", "seq", ""]}) -> tensor<?x?x?x?xf32> {
  %s = ingot.shape %x {start = 0 : i64, end = 2 : i64} : tensor<?x?x64xf32> -> tensor<2xi64>
  %h = ingot.constant dense<[4, 16]> : tensor<2xi64>
  %t = ingot.concat %s, %h {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %p = ingot.transpose %r {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %p : tensor<?x?x?x?xf32>
}

// -----

// On a static input the whole Shape -> Gather -> Concat chain is known, so
// the Reshape becomes fully static without running the folder first.
// CHECK-LABEL: func.func @static_shape_chain
// CHECK-SAME:    -> tensor<2x8x4x16xf32>
// CHECK:         ingot.reshape {{.*}} -> tensor<2x8x4x16xf32>
func.func @static_shape_chain(%x: tensor<2x8x64xf32>) -> tensor<?x?x?x?xf32> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<2x8x64xf32> -> tensor<3xi64>
  %i = ingot.constant dense<[0, 1]> : tensor<2xi64>
  %bs = ingot.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %h = ingot.constant dense<[4, 16]> : tensor<2xi64>
  %t = ingot.concat %bs, %h {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<2x8x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// -----

// Values flow through gather and integer arithmetic too: head_dim / 2 = 32
// sizes a ConstantOfShape (no constant exists in the IR for it) and the last
// dim of a Reshape; `0` copies the symbolic batch, `-1` stays unknown.
// CHECK-LABEL: func.func @values_through_arithmetic
// CHECK-SAME:    -> tensor<?x?x32xf32>
// CHECK:         %[[H:.+]] = ingot.div
// CHECK:         %[[T:.+]] = ingot.concat
// CHECK:         %[[R:.+]] = ingot.reshape %{{.+}}, %[[T]] {{.*}} -> tensor<?x?x32xf32>
// CHECK:         %[[Z:.+]] = ingot.constant_of_shape %[[H]] {value = 0.000000e+00 : f64} : tensor<1xi64> -> tensor<32xf32>
// CHECK:         %[[Y:.+]] = ingot.add %[[R]], %[[Z]] : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
// CHECK:         return %[[Y]] : tensor<?x?x32xf32>
func.func @values_through_arithmetic(%x: tensor<?x?x64xf32> {ingot.dims = ["batch", "seq", ""]}) -> tensor<?x?x?xf32> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x?x64xf32> -> tensor<3xi64>
  %i = ingot.constant dense<[2]> : tensor<1xi64>
  %d = ingot.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %two = ingot.constant dense<2> : tensor<1xi64>
  %h = ingot.div %d, %two : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m = ingot.constant dense<[0, -1]> : tensor<2xi64>
  %t = ingot.concat %m, %h {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %z = ingot.constant_of_shape %h {value = 0.0 : f64} : tensor<1xi64> -> tensor<?xf32>
  %y = ingot.add %r, %z : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}

// -----

// A dynamic dim broadcast against a static 64 must be 64 (or the op is
// invalid); the function argument itself keeps its type.
// CHECK-LABEL: func.func @broadcast_refines_dynamic_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?xf32>, %[[B:.+]]: tensor<64xf32>) -> tensor<?x64xf32>
// CHECK:         %[[R:.+]] = ingot.add %[[X]], %[[B]] : (tensor<?x?xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK:         return %[[R]] : tensor<?x64xf32>
func.func @broadcast_refines_dynamic_dim(%x: tensor<?x?xf32>, %b: tensor<64xf32>) -> tensor<?x?xf32> {
  %r = ingot.add %x, %b : (tensor<?x?xf32>, tensor<64xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// Static dims are never loosened: the written 8 stays where the rule only
// knows `?`.
// CHECK-LABEL: func.func @static_dims_kept
// CHECK:         ingot.matmul %{{.+}}, %{{.+}} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<8x?xf32>
func.func @static_dims_kept(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<8x?xf32> {
  %r = ingot.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<8x?xf32>
  return %r : tensor<8x?xf32>
}

// -----

// NEGATIVE: against a dynamic dim or a 1 nothing is known, so every `?`
// stays.
// CHECK-LABEL: func.func @nothing_to_refine
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?xf32>, %[[Y:.+]]: tensor<?x1xf32>, %[[T:.+]]: tensor<2xi64>) -> tensor<?x?xf32>
// CHECK:         %[[R:.+]] = ingot.add %[[X]], %[[Y]] : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
// CHECK:         %[[S:.+]] = ingot.reshape %[[R]], %[[T]] {allowzero = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK:         return %[[S]] : tensor<?x?xf32>
func.func @nothing_to_refine(%x: tensor<?x?xf32>, %y: tensor<?x1xf32>, %t: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = ingot.add %x, %y : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  // The target is run-time data.
  %s = ingot.reshape %r, %t {allowzero = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}

// -----

// The Shape op's values are its input's static dims, so the verifier already
// knows the target is [4, 8] and rejects the written 8x4.
func.func @result_type_contradicts_inferred(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<4x8xf32> -> tensor<2xi64>
  // expected-error @+1 {{'ingot.reshape' op result shape [8,4] does not match the inferred [4,8]}}
  %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// An op that only becomes invalid once its operands are refined: the
// reshape is [?,?,32] after propagation, which cannot broadcast with 64.
func.func @invalid_after_refinement(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}, %b: tensor<64xf32>) -> tensor<?x?x?xf32> {
  %t = ingot.constant dense<[0, 2, 32]> : tensor<3xi64>
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  // expected-error @+1 {{'ingot.add' op cannot broadcast shapes [?,2,32] [64]: dims 32 and 64 differ at output axis 2}}
  %y = ingot.add %r, %b : (tensor<?x?x?xf32>, tensor<64xf32>) -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}

// A function without a body has nothing to refine and keeps its signature.
// DECL: func.func private @external(tensor<?x64xf32>) -> tensor<?x64xf32>

// -----

// Merging heads: dims copied with 0 cancel, so -1 is 4 * 8 = 32.
// CHECK-LABEL: func.func @reshape_merge_heads
// CHECK:         ingot.reshape {{.*}} -> tensor<?x?x32xf32>
func.func @reshape_merge_heads(%x: tensor<?x?x4x8xf32>) -> tensor<?x?x?xf32> {
  %t = ingot.constant dense<[0, 0, -1]> : tensor<3xi64>
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x?x4x8xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// -----

// A float Range over whole numbers known ahead (YOLOv8's anchor grid:
// Range(0.0, float(width), 1.0) with the width a constant once the input
// is pinned) gets a static size; a fractional delta leaves it dynamic.
// CHECK-LABEL: func.func @float_range_whole_numbers
// CHECK:         ingot.range {{.*}} -> tensor<40xf32>
// CHECK:         ingot.range {{.*}} -> tensor<?xf32>
func.func @float_range_whole_numbers() -> (tensor<?xf32>, tensor<?xf32>) {
  %start = ingot.constant dense<0.0> : tensor<f32>
  %w = ingot.constant dense<40> : tensor<i64>
  %limit = ingot.cast %w : tensor<i64> -> tensor<f32>
  %one = ingot.constant dense<1.0> : tensor<f32>
  %half = ingot.constant dense<0.5> : tensor<f32>
  %r = ingot.range %start, %limit, %one {count = -1 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  %h = ingot.range %start, %limit, %half {count = -1 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %r, %h : tensor<?xf32>, tensor<?xf32>
}
