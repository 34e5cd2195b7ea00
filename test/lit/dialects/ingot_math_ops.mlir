// RUN: ingot-opt %s --split-input-file --verify-diagnostics | ingot-opt --split-input-file | FileCheck %s
// RUN: ingot-opt %s --split-input-file --verify-diagnostics --mlir-print-op-generic | ingot-opt --split-input-file | FileCheck %s

// Round trips of the math coverage ops (custom and generic form), then one
// block per verifier error (those print nothing and are checked by
// --verify-diagnostics).

// CHECK-LABEL: func.func @unary_math
// CHECK:         ingot.unary_math %{{.+}} {kind = "log"} : tensor<?x4xf32>
// CHECK:         ingot.unary_math %{{.+}} {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32, kind = "hard_sigmoid"} : tensor<?x4xf32>
// CHECK:         ingot.unary_math %{{.+}} {kind = "abs"} : tensor<3xi64>
// CHECK:         ingot.unary_math %{{.+}} {kind = "not"} : tensor<2xi1>
func.func @unary_math(%x: tensor<?x4xf32>, %i: tensor<3xi64>, %b: tensor<2xi1>) -> (tensor<?x4xf32>, tensor<3xi64>, tensor<2xi1>) {
  %0 = ingot.unary_math %x {kind = "log"} : tensor<?x4xf32>
  %1 = ingot.unary_math %0 {kind = "hard_sigmoid", alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<?x4xf32>
  %2 = ingot.unary_math %i {kind = "abs"} : tensor<3xi64>
  %3 = ingot.unary_math %b {kind = "not"} : tensor<2xi1>
  return %1, %2, %3 : tensor<?x4xf32>, tensor<3xi64>, tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @binary_and_compare
// CHECK:         ingot.binary_math %{{.+}}, %{{.+}} {kind = "max"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK:         ingot.binary_math %{{.+}}, %{{.+}} {kind = "and"} : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// CHECK:         ingot.compare %{{.+}}, %{{.+}} {kind = "less"} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xi1>
func.func @binary_and_compare(%a: tensor<?x4xf32>, %b: tensor<4xf32>, %p: tensor<2x1xi1>, %q: tensor<3xi1>, %s: tensor<f32>) -> (tensor<?x4xf32>, tensor<2x3xi1>, tensor<?x4xi1>) {
  %0 = ingot.binary_math %a, %b {kind = "max"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = ingot.binary_math %p, %q {kind = "and"} : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %2 = ingot.compare %a, %s {kind = "less"} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xi1>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<2x3xi1>, tensor<?x4xi1>
}

// -----

// The integer kinds (ONNX Mod, BitShift, Bitwise*); fmod also on f32.
// CHECK-LABEL: func.func @integer_kinds
// CHECK:         ingot.binary_math %{{.+}}, %{{.+}} {kind = "mod"} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
// CHECK:         ingot.binary_math %{{.+}}, %{{.+}} {kind = "shift_right"} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
// CHECK:         ingot.binary_math %{{.+}}, %{{.+}} {kind = "bitwise_xor"} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
// CHECK:         ingot.binary_math %{{.+}}, %{{.+}} {kind = "fmod"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @integer_kinds(%a: tensor<3x4xi32>, %b: tensor<4xi32>, %f: tensor<4xf32>) -> (tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<4xf32>) {
  %0 = ingot.binary_math %a, %b {kind = "mod"} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %1 = ingot.binary_math %a, %b {kind = "shift_right"} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %2 = ingot.binary_math %a, %b {kind = "bitwise_xor"} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %3 = ingot.binary_math %f, %f {kind = "fmod"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK:         ingot.reduce %{{.+}} {axes = array<i64: -1>, keepdims = 0 : i64, kind = "sum"} : (tensor<?x8xf32>) -> tensor<?xf32>
// CHECK:         ingot.reduce %{{.+}}, %{{.+}} {axes = array<i64>, keepdims = 1 : i64, kind = "max", noop_with_empty_axes = 1 : i64} : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
// CHECK:         ingot.arg_reduce %{{.+}} {axis = 1 : i64, keepdims = 1 : i64, kind = "max", select_last_index = 0 : i64} : tensor<?x8xf32> -> tensor<?x1xi64>
// CHECK:         ingot.log_softmax %{{.+}} {axis = -1 : i64} : tensor<?x8xf32>
// CHECK:         ingot.cumsum %{{.+}} {axis = 1 : i64, exclusive = 0 : i64, reverse = 1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK:         ingot.cumsum %{{.+}}, %{{.+}} {exclusive = 1 : i64, reverse = 0 : i64} : (tensor<?x8xf32>, tensor<i32>) -> tensor<?x8xf32>
func.func @reductions(%x: tensor<?x8xf32>, %axes: tensor<?xi64>, %a: tensor<i32>) -> (tensor<?xf32>, tensor<?x1xi64>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = ingot.reduce %x {kind = "sum", axes = array<i64: -1>, keepdims = 0 : i64} : (tensor<?x8xf32>) -> tensor<?xf32>
  %r = ingot.reduce %x, %axes {kind = "max", axes = array<i64>, keepdims = 1 : i64, noop_with_empty_axes = 1 : i64} : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %1 = ingot.arg_reduce %x {kind = "max", axis = 1 : i64, keepdims = 1 : i64, select_last_index = 0 : i64} : tensor<?x8xf32> -> tensor<?x1xi64>
  %2 = ingot.log_softmax %x {axis = -1 : i64} : tensor<?x8xf32>
  %3 = ingot.cumsum %x {axis = 1 : i64, exclusive = 0 : i64, reverse = 1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %c = ingot.cumsum %x, %a {exclusive = 1 : i64, reverse = 0 : i64} : (tensor<?x8xf32>, tensor<i32>) -> tensor<?x8xf32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<?x1xi64>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

func.func @unknown_unary_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.unary_math' op unknown kind "tan"}}
  %0 = ingot.unary_math %x {kind = "tan"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @log_of_ints(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'ingot.unary_math' op kind "log" does not take 'i64'}}
  %0 = ingot.unary_math %x {kind = "log"} : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @leaky_relu_without_alpha(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.unary_math' op kind "leaky_relu" needs `alpha`}}
  %0 = ingot.unary_math %x {kind = "leaky_relu"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @and_of_floats(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.binary_math' op kind "and" takes i1, got 'f32'}}
  %0 = ingot.binary_math %a, %a {kind = "and"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @shift_of_floats(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.binary_math' op kind "shift_left" takes i64 or i32, got 'f32'}}
  %0 = ingot.binary_math %a, %a {kind = "shift_left"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @max_bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'ingot.binary_math' op cannot broadcast shapes [2,3] [4]}}
  %0 = ingot.binary_math %a, %b {kind = "max"} : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @compare_mixed_types(%a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xi1> {
  // expected-error @+1 {{'ingot.compare' op operands must share an element type}}
  %0 = ingot.compare %a, %b {kind = "less"} : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @less_of_bools(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'ingot.compare' op kind "less" does not take 'i1'}}
  %0 = ingot.compare %a, %a {kind = "less"} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @reduce_wrong_shape(%x: tensor<3x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ingot.reduce' op result shape [8] does not match the inferred [3]}}
  %0 = ingot.reduce %x {kind = "max", axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<3x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @l2_of_ints(%x: tensor<3x8xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'ingot.reduce' op kind "l2" does not take 'i32'}}
  %0 = ingot.reduce %x {kind = "l2", axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<3x8xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @reduce_axes_twice(%x: tensor<3x8xf32>, %a: tensor<1xi64>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'ingot.reduce' op a run-time axes operand must be 1-D and comes with an empty `axes` attribute}}
  %0 = ingot.reduce %x, %a {kind = "sum", axes = array<i64: 1>, keepdims = 1 : i64} : (tensor<3x8xf32>, tensor<1xi64>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

func.func @reduce_dynamic_axes_count_without_keepdims(%x: tensor<3x8xf32>, %a: tensor<?xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{'ingot.reduce' op reduce without keepdims needs an axes operand of static length at most the rank}}
  %0 = ingot.reduce %x, %a {kind = "sum", axes = array<i64>, keepdims = 0 : i64} : (tensor<3x8xf32>, tensor<?xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @arg_reduce_axis_out_of_range(%x: tensor<3x8xf32>) -> tensor<3x8xi64> {
  // expected-error @+1 {{'ingot.arg_reduce' op axis 2 out of range for rank 2}}
  %0 = ingot.arg_reduce %x {kind = "min", axis = 2 : i64, keepdims = 1 : i64, select_last_index = 0 : i64} : tensor<3x8xf32> -> tensor<3x8xi64>
  return %0 : tensor<3x8xi64>
}

// -----

func.func @log_softmax_axis_out_of_range(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'ingot.log_softmax' op axis -3 out of range for rank 2}}
  %0 = ingot.log_softmax %x {axis = -3 : i64} : tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

func.func @cumsum_of_bools(%x: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'ingot.cumsum' op does not take 'i1'}}
  %0 = ingot.cumsum %x {axis = 0 : i64, exclusive = 0 : i64, reverse = 0 : i64} : (tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @cumsum_two_axes(%x: tensor<3xf32>, %a: tensor<i64>) -> tensor<3xf32> {
  // expected-error @+1 {{'ingot.cumsum' op needs exactly one of `axis` and an axis operand}}
  %0 = ingot.cumsum %x, %a {axis = 0 : i64, exclusive = 0 : i64, reverse = 0 : i64} : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
