// RUN: ingot-opt %s --ingot-fuse-linear-epilogue --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fuse-linear-epilogue=residual=false --split-input-file | FileCheck %s --check-prefix=NORES
// RUN: ingot-opt %s --ingot-fuse-linear-epilogue=activation=false --split-input-file | FileCheck %s --check-prefix=NOACT

// GPT-2's MLP: gelu(tanh) into c_fc, the residual add into c_proj.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[H:.*]] = ingot.linear %arg0, %{{.*}}, %{{.*}} {activation = "gelu_tanh", w_layout = "kn"}
// CHECK: %[[Y:.*]] = ingot.linear %[[H]], %{{.*}}, %{{.*}} residual %arg0 {w_layout = "kn"}
// CHECK-NOT: ingot.gelu
// CHECK-NOT: ingot.add
// CHECK: return %[[Y]]
// residual=false: the gelu still fuses, the add stays.
// NORES-LABEL: func.func @mlp
// NORES: %[[H:.*]] = ingot.linear %arg0, %{{.*}}, %{{.*}} {activation = "gelu_tanh", w_layout = "kn"}
// NORES: %[[O:.*]] = ingot.linear %[[H]], %{{.*}}, %{{.*}} {w_layout = "kn"}
// NORES-NOT: residual
// NORES: %[[Y:.*]] = ingot.add %arg0, %[[O]]
// NORES: return %[[Y]]
// activation=false: the residual still fuses, the gelu stays.
// NOACT-LABEL: func.func @mlp
// NOACT: %[[H:.*]] = ingot.linear %arg0, %{{.*}}, %{{.*}} {w_layout = "kn"}
// NOACT: %[[A:.*]] = ingot.gelu %[[H]] {approximate = "tanh"}
// NOACT: %[[Y:.*]] = ingot.linear %[[A]], %{{.*}}, %{{.*}} residual %arg0 {w_layout = "kn"}
// NOACT-NOT: ingot.add
// NOACT-NOT: activation =
// NOACT: return %[[Y]]
func.func @mlp(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %w1 = ingot.param "fc.w" : tensor<64x256xf32>
  %b1 = ingot.param "fc.b" : tensor<256xf32>
  %w2 = ingot.param "proj.w" : tensor<256x64xf32>
  %b2 = ingot.param "proj.b" : tensor<64xf32>
  %h = ingot.linear %x, %w1, %b1 {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %a = ingot.gelu %h {approximate = "tanh"} : tensor<?x256xf32>
  %o = ingot.linear %a, %w2, %b2 {w_layout = "kn"} : (tensor<?x256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %y = ingot.add %x, %o : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// What ONNX exporters write: MatMul by a weight, Add of a bias, Relu.
// CHECK-LABEL: func.func @onnx_matmul
// CHECK: ingot.linear %arg0, %{{.*}}, %{{.*}} {activation = "relu", w_layout = "kn"} : (tensor<2x8x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
// CHECK-NOT: ingot.matmul
// CHECK-NOT: ingot.relu
func.func @onnx_matmul(%x: tensor<2x8x64xf32>) -> tensor<2x8x32xf32> {
  %w = ingot.param "w" : tensor<64x32xf32>
  %b = ingot.param "b" : tensor<32xf32>
  %m = ingot.matmul %x, %w : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
  %s = ingot.add %m, %b : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %r = ingot.relu %s : tensor<2x8x32xf32>
  return %r : tensor<2x8x32xf32>
}

// -----

// jax2tf's Dense: the bias a [1, 1, N] param, reshaped to [N] for the
// linear; a [1, 2, N] one is not a bias.
// CHECK-LABEL: func.func @dense_bias
// CHECK: %[[B:.*]] = ingot.reshape %{{.*}}, %{{.*}} {allowzero = 0 : i64} : (tensor<1x1x32xf32>, tensor<1xi64>) -> tensor<32xf32>
// CHECK: %[[Y:.*]] = ingot.linear %arg0, %{{.*}}, %[[B]] {w_layout = "kn"}
// CHECK: ingot.linear %[[Y]], %{{.*}} residual %{{.*}}
func.func @dense_bias(%x: tensor<2x8x64xf32>) -> tensor<2x8x32xf32> {
  %w = ingot.param "w" : tensor<64x32xf32>
  %w2 = ingot.param "w2" : tensor<32x32xf32>
  %b = ingot.param "b" : tensor<1x1x32xf32>
  %b2 = ingot.param "b2" : tensor<2x8x32xf32>
  %m = ingot.matmul %x, %w : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
  %s = ingot.add %m, %b : (tensor<2x8x32xf32>, tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
  %m2 = ingot.matmul %s, %w2 : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %s2 = ingot.add %m2, %b2 : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %s2 : tensor<2x8x32xf32>
}

// -----

// SiLU written out as x * sigmoid(x).
// CHECK-LABEL: func.func @silu
// CHECK: ingot.linear %arg0, %{{.*}} {activation = "silu", w_layout = "nk"}
// CHECK-NOT: ingot.sigmoid
func.func @silu(%x: tensor<?x64xf32>) -> tensor<?x32xf32> {
  %w = ingot.param "w" : tensor<32x64xf32>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %s = ingot.sigmoid %y : tensor<?x32xf32>
  %z = ingot.mul %y, %s : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %z : tensor<?x32xf32>
}

// -----

// Must not fire: the linear's output is also returned (the plain result
// is needed), the add broadcasts, and the matmul's rhs is not a weight.
// CHECK-LABEL: func.func @no_fuse
// CHECK: ingot.linear %arg0, %{{.*}} {w_layout = "nk"}
// CHECK: ingot.relu
// CHECK: ingot.add
// CHECK: ingot.matmul
func.func @no_fuse(%x: tensor<?x64xf32>, %row: tensor<32xf32>, %m: tensor<64x32xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %w = ingot.param "w" : tensor<32x64xf32>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %r = ingot.relu %y : tensor<?x32xf32>
  %a = ingot.add %r, %row : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %p = ingot.matmul %x, %m : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %y, %a, %p : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// ONNX Gemm by a weight: transB gives "nk", else "kn"; the bias comes
// along. A scaled Gemm (alpha 2) and a per-run B stay gemm.
// CHECK-LABEL: func.func @onnx_gemm
// CHECK: ingot.linear %arg0, %{{.*}}, %{{.*}} {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
// CHECK: ingot.linear %arg0, %{{.*}} {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
// CHECK: ingot.gemm %arg0, %{{.*}} {alpha = 2.000000e+00
// CHECK: ingot.gemm %arg0, %arg1
func.func @onnx_gemm(%x: tensor<?x64xf32>, %m: tensor<64x32xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %wt = ingot.param "wt" : tensor<32x64xf32>
  %w = ingot.param "w" : tensor<64x32xf32>
  %b = ingot.param "b" : tensor<32xf32>
  %0 = ingot.gemm %x, %wt, %b {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64} : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %1 = ingot.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 0 : i64} : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %2 = ingot.gemm %x, %w {alpha = 2.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 0 : i64} : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %3 = ingot.gemm %x, %m {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 0 : i64} : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %0, %1, %2, %3 : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}
