// RUN: ingot-opt %s --split-input-file --ingot-compute-bounds="max-dims=seq=128 run-time-sizes=false" --verify-diagnostics

// With run-time-sizes=false (GPU plans, whose buffers are all reserved
// before the first run) a size that no compiled bound covers is an error
// naming the op, not a buffer sized at run time.

func.func @constant_of_shape_from_runtime_data(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'ingot.constant_of_shape' op result size depends on run-time data, not on input shapes, and this target needs every buffer bounded at compile time; pin the inputs with --shape}}
  %r = ingot.constant_of_shape %s {value = 0.0 : f64} : tensor<2xi64> -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

func.func @static_target_invalid_at_maximum(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}) -> tensor<1x64xf32> {
  %t = ingot.constant dense<[1, 64]> : tensor<2xi64>
  // expected-error @+1 {{'ingot.reshape' op at the symbols' maxima (seq=128): cannot reshape [128,64] to [1,64]: element counts differ (8192 vs 64); if the model only runs at some sizes, bound its symbols with --max-dim SYMBOL=N or pin inputs with --shape}}
  %r = ingot.reshape %x, %t {allowzero = 0 : i64} : (tensor<?x64xf32>, tensor<2xi64>) -> tensor<1x64xf32>
  return %r : tensor<1x64xf32>
}

// -----

// A static plan has no branches: an ingot.if that survived import (its
// condition is run-time data) is refused, naming the way out.
func.func @run_time_branch(%c: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'ingot.if' op branches on a condition known only at run time, and this target runs a static plan; pin the inputs the condition depends on, or compile for the cpu target}}
  %r = ingot.if %c : tensor<i1> -> tensor<3xf32> {
    ingot.yield %x : tensor<3xf32>
  } else {
    %n = ingot.neg %x : tensor<3xf32>
    ingot.yield %n : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
