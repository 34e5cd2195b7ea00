// RUN: ingot-opt %s --split-input-file --verify-diagnostics

// Verifier errors of ingot.if: a one-element condition, a yield per
// region with one value per result, of the result's dtype and a shape it
// admits.

func.func @two_element_condition(%c: tensor<2xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{condition must hold one element, got 'tensor<2xi1>'}}
  %r = ingot.if %c : tensor<2xi1> -> tensor<3xf32> {
    ingot.yield %x : tensor<3xf32>
  } else {
    ingot.yield %x : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @yield_count(%c: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{else branch yields 2 values for 1 results}}
  %r = ingot.if %c : tensor<i1> -> tensor<3xf32> {
    ingot.yield %x : tensor<3xf32>
  } else {
    ingot.yield %x, %x : tensor<3xf32>, tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @yield_shape(%c: tensor<i1>, %x: tensor<3xf32>, %y: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{then branch yields 'tensor<4xf32>' as result 0, which is 'tensor<3xf32>'}}
  %r = ingot.if %c : tensor<i1> -> tensor<3xf32> {
    ingot.yield %y : tensor<4xf32>
  } else {
    ingot.yield %x : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @yield_dtype(%c: tensor<i1>, %x: tensor<3xf32>, %n: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{else branch yields 'tensor<3xi64>' as result 0, which is 'tensor<3xf32>'}}
  %r = ingot.if %c : tensor<i1> -> tensor<3xf32> {
    ingot.yield %x : tensor<3xf32>
  } else {
    ingot.yield %n : tensor<3xi64>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @yield_outside_if(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expects parent op 'ingot.if'}}
  ingot.yield %x : tensor<3xf32>
}
