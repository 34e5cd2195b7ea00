// RUN: ingot-opt %s --split-input-file --verify-diagnostics

// Verifier errors of ingot.fused_elementwise: the program is checked by the
// same parser the runtime kernel uses.

func.func @unknown_opcode(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op unknown opcode 'frobnicate' at instruction 1}}
  %0 = ingot.fused_elementwise %x {ops = "neg frobnicate", args = array<i64: 0, -1, 1, -1>, constants = array<f64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @ref_not_yet_defined(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op instruction 0 ('add') refers to value 1, but 1 are defined before it (1 inputs, then results)}}
  %0 = ingot.fused_elementwise %x {ops = "add", args = array<i64: 0, 1>, constants = array<f64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @args_length(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op args has 3 entries; expected 2 per instruction (2)}}
  %0 = ingot.fused_elementwise %x {ops = "neg", args = array<i64: 0, -1, 0>, constants = array<f64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op instruction 0 ('hard_sigmoid') reads constant 0 and the next of 1}}
  %0 = ingot.fused_elementwise %x {ops = "hard_sigmoid", args = array<i64: 0, 0>, constants = array<f64: 0.2>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @integer_input(%x: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op inputs must be f32 or i32, got 'tensor<4xi64>'}}
  %0 = ingot.fused_elementwise %x {ops = "neg", args = array<i64: 0, -1>, constants = array<f64>} : (tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_result_shape(%x: tensor<4x1xf32>, %y: tensor<3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op result shape [4,4] does not match the inferred [4,3]}}
  %0 = ingot.fused_elementwise %x, %y {ops = "add", args = array<i64: 0, 1>, constants = array<f64>} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @no_inputs() -> tensor<f32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op needs at least one input}}
  %0 = ingot.fused_elementwise {ops = "const", args = array<i64: 0, -1>, constants = array<f64: 1.0>} : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @unknown_reduction(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op unknown reduction "median"}}
  %0 = ingot.fused_elementwise %x {ops = "neg", args = array<i64: 0, -1>, constants = array<f64>, reduce = "median", keepdims = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_without_keepdims(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op `reduce` and `keepdims` come together}}
  %0 = ingot.fused_elementwise %x {ops = "neg", args = array<i64: 0, -1>, constants = array<f64>, reduce = "sum"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduced_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op result shape [4,8] does not match the inferred [4]}}
  %0 = ingot.fused_elementwise %x {ops = "neg", args = array<i64: 0, -1>, constants = array<f64>, reduce = "max", keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @i32_read_by_another_op(%x: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op instruction 0 (neg) reads an int32 input (only from_i32 may)}}
  %0 = ingot.fused_elementwise %x {ops = "neg", args = array<i64: 0, -1>, constants = array<f64>} : (tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @from_i32_of_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ingot.fused_elementwise' op instruction 0 (from_i32) must read an int32 input}}
  %0 = ingot.fused_elementwise %x {ops = "from_i32 neg", args = array<i64: 0, -1, 1, -1>, constants = array<f64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
