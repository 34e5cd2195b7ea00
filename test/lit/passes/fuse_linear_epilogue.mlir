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

// GELU as PyTorch's ONNX export writes it, after a MatMul + bias:
// 0.5 · x · (1 + erf(x / √2)) with the factors in two orders (BERT's and
// an int8 export's), and the tanh form with pow(x, 3) and with x · x · x.
// CHECK-LABEL: func.func @decomposed_gelu
// CHECK: ingot.linear %arg0, %{{.*}}, %{{.*}} {activation = "gelu", w_layout = "kn"}
// CHECK: ingot.linear %arg0, %{{.*}}, %{{.*}} {activation = "gelu", w_layout = "kn"}
// CHECK: ingot.linear %arg0, %{{.*}}, %{{.*}} {activation = "gelu_tanh", w_layout = "kn"}
// CHECK: ingot.linear %arg0, %{{.*}}, %{{.*}} {activation = "gelu_tanh", w_layout = "kn"}
// CHECK-NOT: ingot.erf
// CHECK-NOT: ingot.tanh
// CHECK-NOT: ingot.pow
// CHECK-NOT: ingot.mul
// NOACT-LABEL: func.func @decomposed_gelu
// NOACT-COUNT-2: ingot.erf
// NOACT-COUNT-2: ingot.tanh
func.func @decomposed_gelu(%x: tensor<?x64xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %w = ingot.param "w" : tensor<64x32xf32>
  %b = ingot.param "b" : tensor<32xf32>
  %sqrt2 = ingot.constant dense<1.41421354> : tensor<f32>
  %rsqrt2 = ingot.constant dense<0.707106769> : tensor<f32>
  %one = ingot.constant dense<1.0> : tensor<f32>
  %half = ingot.constant dense<0.5> : tensor<f32>
  %three = ingot.constant dense<3.0> : tensor<f32>
  %c1 = ingot.constant dense<0.797884583> : tensor<f32>
  %c2 = ingot.constant dense<4.471500e-02> : tensor<f32>
  // BERT: ((x * (erf(x / √2) + 1)) * 0.5
  %m0 = ingot.matmul %x, %w : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %y0 = ingot.add %b, %m0 : (tensor<32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %d0 = ingot.div %y0, %sqrt2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e0 = ingot.erf %d0 : tensor<?x32xf32>
  %a0 = ingot.add %e0, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p0 = ingot.mul %y0, %a0 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g0 = ingot.mul %p0, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  // x * (0.5 * (1 + erf(x * (1/√2))))
  %m1 = ingot.matmul %x, %w : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %y1 = ingot.add %m1, %b : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %d1 = ingot.mul %rsqrt2, %y1 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %e1 = ingot.erf %d1 : tensor<?x32xf32>
  %a1 = ingot.add %one, %e1 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %p1 = ingot.mul %half, %a1 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g1 = ingot.mul %y1, %p1 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  // (x * 0.5) * (1 + tanh(c1 * (x + pow(x, 3) * c2)))
  %m2 = ingot.matmul %x, %w : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %y2 = ingot.add %m2, %b : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %q2 = ingot.pow %y2, %three : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %k2 = ingot.mul %q2, %c2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %s2 = ingot.add %y2, %k2 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %u2 = ingot.mul %s2, %c1 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %t2 = ingot.tanh %u2 : tensor<?x32xf32>
  %a2 = ingot.add %t2, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %h2 = ingot.mul %y2, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %g2 = ingot.mul %h2, %a2 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  // 0.5 * x * (1 + tanh(c1 * (x + c2 * (x * x * x))))
  %m3 = ingot.matmul %x, %w : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %y3 = ingot.add %m3, %b : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %sq3 = ingot.mul %y3, %y3 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %q3 = ingot.mul %sq3, %y3 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %k3 = ingot.mul %c2, %q3 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %s3 = ingot.add %k3, %y3 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %u3 = ingot.mul %c1, %s3 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %t3 = ingot.tanh %u3 : tensor<?x32xf32>
  %a3 = ingot.add %one, %t3 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %h3 = ingot.mul %half, %y3 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g3 = ingot.mul %h3, %a3 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %g0, %g1, %g2, %g3 : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Must not fire: a factor of 0.6 instead of 0.5, erf(x / 2), x also
// returned, and a GELU of a function argument (no linear): each keeps its
// erf.
// CHECK-LABEL: func.func @not_gelu
// CHECK-COUNT-4: ingot.erf
func.func @not_gelu(%x: tensor<?x64xf32>, %z: tensor<?x32xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %w = ingot.param "w" : tensor<32x64xf32>
  %sqrt2 = ingot.constant dense<1.41421354> : tensor<f32>
  %two = ingot.constant dense<2.0> : tensor<f32>
  %one = ingot.constant dense<1.0> : tensor<f32>
  %half = ingot.constant dense<0.5> : tensor<f32>
  %six = ingot.constant dense<0.6> : tensor<f32>
  %y0 = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %d0 = ingot.div %y0, %sqrt2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e0 = ingot.erf %d0 : tensor<?x32xf32>
  %a0 = ingot.add %e0, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p0 = ingot.mul %y0, %a0 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g0 = ingot.mul %p0, %six : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %y1 = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %d1 = ingot.div %y1, %two : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e1 = ingot.erf %d1 : tensor<?x32xf32>
  %a1 = ingot.add %e1, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p1 = ingot.mul %y1, %a1 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g1 = ingot.mul %p1, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %y2 = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %d2 = ingot.div %y2, %sqrt2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e2 = ingot.erf %d2 : tensor<?x32xf32>
  %a2 = ingot.add %e2, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p2 = ingot.mul %y2, %a2 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g2 = ingot.mul %p2, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %d3 = ingot.div %z, %sqrt2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e3 = ingot.erf %d3 : tensor<?x32xf32>
  %a3 = ingot.add %e3, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p3 = ingot.mul %z, %a3 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g3 = ingot.mul %p3, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  return %g0, %g1, %g2, %y2, %g3 : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}
