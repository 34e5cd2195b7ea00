// RUN: ingot-opt %s --ingot-raise-gelu --split-input-file | FileCheck %s

// GELU as PyTorch's ONNX export writes it: 0.5 · x · (1 + erf(x / √2))
// with the factors in two orders (BERT's and an int8 export's, the second
// with x · (1/√2)), and the tanh form with pow(x, 3) · c (torch),
// c · ((x · x) · x) and x · (x · (c · x)) (jax2tf). x is also returned: it
// may have readers of its own.
// CHECK-LABEL: func.func @decomposed_gelu
// CHECK-DAG: %[[G0:.*]] = ingot.gelu %arg0 {approximate = "none"} : tensor<?x32xf32>
// CHECK-DAG: %[[G1:.*]] = ingot.gelu %arg0 {approximate = "none"} : tensor<?x32xf32>
// CHECK-DAG: %[[G2:.*]] = ingot.gelu %arg0 {approximate = "tanh"} : tensor<?x32xf32>
// CHECK-DAG: %[[G3:.*]] = ingot.gelu %arg0 {approximate = "tanh"} : tensor<?x32xf32>
// CHECK-DAG: %[[G4:.*]] = ingot.gelu %arg0 {approximate = "tanh"} : tensor<?x32xf32>
// CHECK-NOT: ingot.erf
// CHECK-NOT: ingot.tanh
// CHECK-NOT: ingot.pow
// CHECK-NOT: ingot.mul
// CHECK-NOT: ingot.constant
// CHECK: return %[[G0]], %[[G1]], %[[G2]], %[[G3]], %[[G4]], %arg0
func.func @decomposed_gelu(%x: tensor<?x32xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %sqrt2 = ingot.constant dense<1.41421354> : tensor<f32>
  %rsqrt2 = ingot.constant dense<0.707106769> : tensor<f32>
  %one = ingot.constant dense<1.0> : tensor<f32>
  %half = ingot.constant dense<0.5> : tensor<f32>
  %three = ingot.constant dense<3.0> : tensor<f32>
  %c1 = ingot.constant dense<0.797884583> : tensor<f32>
  %c2 = ingot.constant dense<4.471500e-02> : tensor<f32>
  // BERT: (x * (erf(x / √2) + 1)) * 0.5
  %d0 = ingot.div %x, %sqrt2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e0 = ingot.erf %d0 : tensor<?x32xf32>
  %a0 = ingot.add %e0, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p0 = ingot.mul %x, %a0 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g0 = ingot.mul %p0, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  // x * (0.5 * (1 + erf(x * (1/√2))))
  %d1 = ingot.mul %rsqrt2, %x : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %e1 = ingot.erf %d1 : tensor<?x32xf32>
  %a1 = ingot.add %one, %e1 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %p1 = ingot.mul %half, %a1 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g1 = ingot.mul %x, %p1 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  // (x * 0.5) * (1 + tanh(c1 * (x + pow(x, 3) * c2)))
  %q2 = ingot.pow %x, %three : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %k2 = ingot.mul %q2, %c2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %s2 = ingot.add %x, %k2 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %u2 = ingot.mul %s2, %c1 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %t2 = ingot.tanh %u2 : tensor<?x32xf32>
  %a2 = ingot.add %t2, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %h2 = ingot.mul %x, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %g2 = ingot.mul %h2, %a2 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  // 0.5 * x * (1 + tanh(c1 * (x + c2 * (x * x * x))))
  %sq3 = ingot.mul %x, %x : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %q3 = ingot.mul %sq3, %x : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %k3 = ingot.mul %c2, %q3 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %s3 = ingot.add %k3, %x : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %u3 = ingot.mul %c1, %s3 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %t3 = ingot.tanh %u3 : tensor<?x32xf32>
  %a3 = ingot.add %one, %t3 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %h3 = ingot.mul %half, %x : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g3 = ingot.mul %h3, %a3 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  // jax2tf (Magika): x * (0.5 * (1 + tanh(c1 * (x + x * (x * (c2 * x))))))
  %k4 = ingot.mul %c2, %x : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %q4 = ingot.mul %x, %k4 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %r4 = ingot.mul %x, %q4 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %s4 = ingot.add %x, %r4 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %u4 = ingot.mul %c1, %s4 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %t4 = ingot.tanh %u4 : tensor<?x32xf32>
  %a4 = ingot.add %one, %t4 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %h4 = ingot.mul %half, %a4 : (tensor<f32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g4 = ingot.mul %x, %h4 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %g0, %g1, %g2, %g3, %g4, %x : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Must not fire: a factor of 0.6 instead of 0.5, erf(x / 2), and an erf
// that is also returned (it must exist): each keeps its erf.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: ingot.gelu
// CHECK-COUNT-3: ingot.erf
func.func @not_gelu(%x: tensor<?x32xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %sqrt2 = ingot.constant dense<1.41421354> : tensor<f32>
  %two = ingot.constant dense<2.0> : tensor<f32>
  %one = ingot.constant dense<1.0> : tensor<f32>
  %half = ingot.constant dense<0.5> : tensor<f32>
  %six = ingot.constant dense<0.6> : tensor<f32>
  %d0 = ingot.div %x, %sqrt2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e0 = ingot.erf %d0 : tensor<?x32xf32>
  %a0 = ingot.add %e0, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p0 = ingot.mul %x, %a0 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g0 = ingot.mul %p0, %six : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %d1 = ingot.div %x, %two : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e1 = ingot.erf %d1 : tensor<?x32xf32>
  %a1 = ingot.add %e1, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p1 = ingot.mul %x, %a1 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g1 = ingot.mul %p1, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %d2 = ingot.div %x, %sqrt2 : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %e2 = ingot.erf %d2 : tensor<?x32xf32>
  %a2 = ingot.add %e2, %one : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  %p2 = ingot.mul %x, %a2 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %g2 = ingot.mul %p2, %half : (tensor<?x32xf32>, tensor<f32>) -> tensor<?x32xf32>
  return %g0, %g1, %g2, %e2 : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}
