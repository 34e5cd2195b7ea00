// RUN: ingot-opt %s --ingot-squeeze-conv --split-input-file | FileCheck %s

// TensorFlow's 1-D conv as jax2tf writes it: [N, C, L, 1] by a [k, 1]
// kernel, then a squeeze of the unit dim. The conv runs on the squeezed
// input and weight, its unit dim's attributes dropped.
// CHECK-LABEL: func.func @tf_conv1d
// CHECK-DAG: %[[X:.*]] = ingot.squeeze %arg0 {axes = array<i64: 3>} : tensor<?x8x32x1xf32> -> tensor<?x8x32xf32>
// CHECK-DAG: %[[W:.*]] = ingot.squeeze %{{.*}} {axes = array<i64: 3>} : tensor<16x8x5x1xf32> -> tensor<16x8x5xf32>
// CHECK: %[[Y:.*]] = ingot.conv %[[X]], %[[W]], %{{.*}} {activation = "relu", auto_pad = "NOTSET", dilations = array<i64: 2>, group = 1 : i64, kernel_shape = array<i64: 5>, pads = array<i64: 1, 3>, strides = array<i64: 1>} : (tensor<?x8x32xf32>, tensor<16x8x5xf32>, tensor<16xf32>) -> tensor<?x16x28xf32>
// CHECK-NOT: ingot.squeeze
// CHECK: return %[[Y]]
func.func @tf_conv1d(%x: tensor<?x8x32x1xf32>) -> tensor<?x16x28xf32> {
  %w = ingot.param "w" : tensor<16x8x5x1xf32>
  %b = ingot.param "b" : tensor<16xf32>
  %c = ingot.conv %x, %w, %b {activation = "relu", auto_pad = "NOTSET", dilations = array<i64: 2, 3>, group = 1 : i64, kernel_shape = array<i64: 5, 1>, pads = array<i64: 1, 0, 3, 0>, strides = array<i64: 1, 2>} : (tensor<?x8x32x1xf32>, tensor<16x8x5x1xf32>, tensor<16xf32>) -> tensor<?x16x28x1xf32>
  %s = ingot.squeeze %c {axes = array<i64: 3>} : tensor<?x16x28x1xf32> -> tensor<?x16x28xf32>
  return %s : tensor<?x16x28xf32>
}

// -----

// Must not fire: a squeezed dim the kernel spans (input 1, kernel 3,
// padded to 3), a padded unit dim, every spatial dim squeezed, a batch dim
// squeezed, and a conv also read unsqueezed.
// CHECK-LABEL: func.func @must_not_squeeze
// CHECK: %[[C1:.*]] = ingot.conv %arg
// CHECK-NEXT: ingot.squeeze %[[C1]] {axes
// CHECK: %[[C2:.*]] = ingot.conv %arg
// CHECK-NEXT: ingot.squeeze %[[C2]] {axes
// CHECK: %[[C3:.*]] = ingot.conv %arg
// CHECK-NEXT: ingot.squeeze %[[C3]] {axes
// CHECK: %[[C4:.*]] = ingot.conv %arg
// CHECK-NEXT: ingot.squeeze %[[C4]] {axes
// CHECK: %[[C5:.*]] = ingot.conv %arg
// CHECK-NEXT: ingot.squeeze %[[C5]] {axes
func.func @must_not_squeeze(%x: tensor<1x4x6x1xf32>, %u: tensor<1x4x1x1xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2xf32>, tensor<2x4x1xf32>, tensor<1x2x4xf32>, tensor<1x2x4x1xf32>) {
  %w3 = ingot.param "w3" : tensor<2x4x3x3xf32>
  %w1 = ingot.param "w1" : tensor<2x4x3x1xf32>
  %wu = ingot.param "wu" : tensor<2x4x1x1xf32>
  %c1 = ingot.conv %x, %w3 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x1xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x4x1xf32>
  %s1 = ingot.squeeze %c1 {axes = array<i64: 3>} : tensor<1x2x4x1xf32> -> tensor<1x2x4xf32>
  %c2 = ingot.conv %x, %w1 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 1, 0, 0>, strides = array<i64: 1, 3>} : (tensor<1x4x6x1xf32>, tensor<2x4x3x1xf32>) -> tensor<1x2x4x1xf32>
  %s2 = ingot.squeeze %c2 {axes = array<i64: 3>} : tensor<1x2x4x1xf32> -> tensor<1x2x4xf32>
  %c3 = ingot.conv %u, %wu {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x1x1xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x1x1xf32>
  %s3 = ingot.squeeze %c3 {axes = array<i64: 2, 3>} : tensor<1x2x1x1xf32> -> tensor<1x2xf32>
  %c4 = ingot.conv %x, %w1 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x1xf32>, tensor<2x4x3x1xf32>) -> tensor<1x2x4x1xf32>
  %s4 = ingot.squeeze %c4 {axes = array<i64: 0>} : tensor<1x2x4x1xf32> -> tensor<2x4x1xf32>
  %c5 = ingot.conv %x, %w1 {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x1xf32>, tensor<2x4x3x1xf32>) -> tensor<1x2x4x1xf32>
  %s5 = ingot.squeeze %c5 {axes = array<i64: 3>} : tensor<1x2x4x1xf32> -> tensor<1x2x4xf32>
  return %s1, %s2, %s3, %s4, %s5, %c5 : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2xf32>, tensor<2x4x1xf32>, tensor<1x2x4xf32>, tensor<1x2x4x1xf32>
}
