// RUN: ingot-opt %s --split-input-file --verify-diagnostics

// Every verifier error of the plan dialect, one per block.

func.func @alloc_max_shape_rank_mismatch() {
  // expected-error @+1 {{'plan.alloc' op max_shape has 2 dims but the buffer has rank 1}}
  %a = plan.alloc {max_shape = array<i64: 4, 4>} : memref<?xf32>
  return
}

// -----

func.func @alloc_negative_max_shape() {
  // expected-error @+1 {{'plan.alloc' op max_shape entries must be non-negative, or -1 for a dynamic dim sized at run time}}
  %a = plan.alloc {max_shape = array<i64: -4>} : memref<?xf32>
  return
}

// -----

func.func @alloc_unbounded_static_dim() {
  // expected-error @+1 {{'plan.alloc' op max_shape entries must be non-negative, or -1 for a dynamic dim sized at run time}}
  %a = plan.alloc {max_shape = array<i64: -1>} : memref<4xf32>
  return
}

// -----

func.func @alloc_sized_at_run_time_with_offset() {
  // expected-error @+1 {{'plan.alloc' op is sized at run time and cannot have an arena offset}}
  %a = plan.alloc {max_shape = array<i64: -1, 4>, offset = 0 : i64} : memref<?x4xf32>
  return
}

// -----

func.func @alloc_max_shape_disagrees_with_static_dim() {
  // expected-error @+1 {{'plan.alloc' op max_shape 64 disagrees with static dim 32}}
  %a = plan.alloc {max_shape = array<i64: 8, 64>} : memref<?x32xf32>
  return
}

// -----

func.func @alloc_misaligned_offset() {
  // expected-error @+1 {{'plan.alloc' op offset must be a non-negative multiple of 64}}
  %a = plan.alloc {max_shape = array<i64: 4>, offset = 96 : i64} : memref<?xf32>
  return
}

// -----

// -65 is caught only because it is not a multiple of 64.
func.func @alloc_negative_misaligned_offset() {
  // expected-error @+1 {{'plan.alloc' op offset must be a non-negative multiple of 64}}
  %a = plan.alloc {max_shape = array<i64: 4>, offset = -65 : i64} : memref<?xf32>
  return
}

// -----

// A negative multiple of 64 must be rejected too.
func.func @alloc_negative_offset() {
  // expected-error @+1 {{'plan.alloc' op offset must be a non-negative multiple of 64}}
  %a = plan.alloc {max_shape = array<i64: 4>, offset = -64 : i64} : memref<?xf32>
  return
}

// -----

// The memory planner sizes buffers from their element bit width; an element
// type without one (index) must be rejected here rather than crash
// ingot-plan-memory.
func.func @alloc_element_type_without_size() {
  // expected-error @+1 {{'plan.alloc' op}}
  %a = plan.alloc {max_shape = array<i64: 4>} : memref<4xindex>
  return
}

// -----

// The custom syntax cannot spell an empty `outs`; the generic form can.
func.func @kernel_without_outputs() {
  // expected-error @+1 {{'plan.kernel' op needs at least one output buffer}}
  "plan.kernel"() <{kernel = "relu", args = {}, origin = "relu1", operandSegmentSizes = array<i32: 0, 0>}> : () -> ()
  return
}

// -----

func.func @kernel_output_not_from_alloc(%x: memref<4xf32>) {
  // expected-error @+1 {{'plan.kernel' op outputs must be plan.alloc buffers}}
  plan.kernel "relu" ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) {args = {}, origin = "relu1"}
  return
}

// -----

func.func @kernel_output_is_param(%x: memref<4xf32>) {
  %w = plan.param "w" : memref<4xf32>
  // expected-error @+1 {{'plan.kernel' op outputs must be plan.alloc buffers}}
  plan.kernel "relu" ins(%x : memref<4xf32>) outs(%w : memref<4xf32>) {args = {}, origin = "relu1"}
  return
}

// -----

func.func @kernel_tensor_input(%t: tensor<4xf32>) {
  %a = plan.alloc {max_shape = array<i64: 4>} : memref<4xf32>
  // expected-error @+1 {{'plan.kernel' op inputs must be memrefs or plan.none}}
  plan.kernel "relu" ins(%t : tensor<4xf32>) outs(%a : memref<4xf32>) {args = {}, origin = "relu1"}
  return
}

// -----

func.func @kernel_empty_name(%x: memref<4xf32>) {
  %a = plan.alloc {max_shape = array<i64: 4>} : memref<4xf32>
  // expected-error @+1 {{'plan.kernel' op kernel name must not be empty}}
  plan.kernel "" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {args = {}, origin = "relu1"}
  return
}

// -----

func.func @constant_shape_mismatch() {
  // expected-error @+1 {{'plan.constant' op value type 'tensor<3xi64>' does not match 'memref<4xi64>'}}
  %s = plan.constant dense<[1, 8, 64]> : tensor<3xi64> -> memref<4xi64>
  return
}

// -----

func.func @constant_element_type_mismatch() {
  // expected-error @+1 {{'plan.constant' op value type 'tensor<3xi64>' does not match 'memref<3xi32>'}}
  %s = plan.constant dense<[1, 8, 64]> : tensor<3xi64> -> memref<3xi32>
  return
}

// -----

func.func @param_dynamic_shape() {
  // expected-error @+1 {{'plan.param' op result #0 must be statically shaped memref of any type values, but got 'memref<?xf32>'}}
  %w = plan.param "w" : memref<?xf32>
  return
}
