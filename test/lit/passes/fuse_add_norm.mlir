// RUN: ingot-opt %s --ingot-fuse-add-norm --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fuse-add-norm=layer-norm=false --split-input-file | FileCheck %s --check-prefix=NOLN

// The decoder's residual: the sum feeds the norm and the next residual add.
// CHECK-LABEL: func.func @rms
// CHECK: %[[SUM:[a-z0-9_]+]], %[[Y:[a-z0-9_]+]] = ingot.add_rms_norm %arg0, %arg1, %arg2 {epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: ingot.rms_norm
// CHECK: ingot.add %[[SUM]], %[[Y]]
// layer-norm=false leaves rms_norm fusion on.
// NOLN-LABEL: func.func @rms(
// NOLN: ingot.add_rms_norm %arg0, %arg1, %arg2
func.func @rms(%x: tensor<?x64xf32>, %o: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  %h = ingot.add %x, %o : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %n = ingot.rms_norm %h, %w {epsilon = 1.0e-05 : f32} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %r = ingot.add %h, %n : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// -----

// A bf16 weight stays as it is; the norm's own users read the second result.
// CHECK-LABEL: func.func @rms_bf16_weight
// CHECK: %{{[a-z0-9_]+}}, %[[Y:[a-z0-9_]+]] = ingot.add_rms_norm
// CHECK: return %[[Y]]
func.func @rms_bf16_weight(%x: tensor<4x64xf32>, %o: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %w = ingot.param "w" : tensor<64xbf16>
  %h = ingot.add %x, %o : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %n = ingot.rms_norm %h, %w {epsilon = 1.0e-05 : f32} : (tensor<4x64xf32>, tensor<64xbf16>) -> tensor<4x64xf32>
  return %n : tensor<4x64xf32>
}

// -----

// GPT-2's add + layer_norm over the last dim, with a bias.
// CHECK-LABEL: func.func @layer
// CHECK: %{{[a-z0-9_]+}}, %[[Y:[a-z0-9_]+]] = ingot.add_layer_norm %arg0, %arg1, %arg2, %arg3
// CHECK: return %[[Y]]
// CHECK-NOT: ingot.layer_norm
// layer-norm=false: the add and the layer_norm stay apart.
// NOLN-LABEL: func.func @layer(
// NOLN: %[[H:[a-z0-9_]+]] = ingot.add %arg0, %arg1
// NOLN-NOT: add_layer_norm
// NOLN: ingot.layer_norm %[[H]], %arg2, %arg3
// NOLN-NOT: add_layer_norm
func.func @layer(%x: tensor<?x64xf32>, %o: tensor<?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %h = ingot.add %x, %o : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %n = ingot.layer_norm %h, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %n : tensor<?x64xf32>
}

// -----

// Must not fire: a broadcasting add (the kernels add row by row).
// CHECK-LABEL: func.func @broadcast_add
// CHECK: ingot.add
// CHECK: ingot.rms_norm
// CHECK-NOT: add_rms_norm
func.func @broadcast_add(%x: tensor<?x64xf32>, %bias: tensor<64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  %h = ingot.add %x, %bias : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %n = ingot.rms_norm %h, %w {epsilon = 1.0e-05 : f32} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %n : tensor<?x64xf32>
}

// -----

// Must not fire: layer_norm over more than the last dim.
// CHECK-LABEL: func.func @layer_two_axes
// CHECK: ingot.add
// CHECK: ingot.layer_norm
// CHECK-NOT: add_layer_norm
func.func @layer_two_axes(%x: tensor<2x8x64xf32>, %o: tensor<2x8x64xf32>, %g: tensor<8x64xf32>) -> tensor<2x8x64xf32> {
  %h = ingot.add %x, %o : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %n = ingot.layer_norm %h, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  return %n : tensor<2x8x64xf32>
}

// -----

// A weight param made after the add moves up to the fused op.
// CHECK-LABEL: func.func @param_after_add
// CHECK: ingot.param "w"
// CHECK-NEXT: ingot.add_rms_norm
func.func @param_after_add(%x: tensor<4x64xf32>, %o: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %h = ingot.add %x, %o : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %w = ingot.param "w" : tensor<64xf32>
  %n = ingot.rms_norm %h, %w {epsilon = 1.0e-05 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %n : tensor<4x64xf32>
}

// -----

// Must not fire: the norm's weight is computed after the add.
// CHECK-LABEL: func.func @weight_after_add
// CHECK: ingot.add
// CHECK: ingot.rms_norm
func.func @weight_after_add(%x: tensor<4x64xf32>, %o: tensor<4x64xf32>, %w0: tensor<64xf32>) -> tensor<4x64xf32> {
  %h = ingot.add %x, %o : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %w = ingot.relu %w0 : tensor<64xf32>
  %n = ingot.rms_norm %h, %w {epsilon = 1.0e-05 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %n : tensor<4x64xf32>
}
