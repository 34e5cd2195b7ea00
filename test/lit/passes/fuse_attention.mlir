// RUN: ingot-opt %s --ingot-fuse-attention --split-input-file | FileCheck %s

// BERT's self-attention as exported: q, k, v reshaped into heads and
// transposed, scores divided by √d, the mask added, softmax, the weighted
// sum transposed back. One attention op on the untransposed tensors
// replaces the chain and the transpose back.
// CHECK-LABEL: func.func @bert
// CHECK: %[[O:.*]] = ingot.attention %arg0, %arg1, %arg2, %arg3 {scale = 2.500000e-01 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x1x1x?xf32>) -> tensor<?x?x4x16xf32>
// CHECK-NOT: ingot.transpose
// CHECK-NOT: ingot.softmax
// CHECK: return %[[O]]
func.func @bert(%q: tensor<?x?x4x16xf32>, %k: tensor<?x?x4x16xf32>, %v: tensor<?x?x4x16xf32>, %mask: tensor<?x1x1x?xf32>) -> tensor<?x?x4x16xf32> {
  %c = ingot.constant dense<4.0> : tensor<f32>
  %qt = ingot.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %kt = ingot.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<?x?x4x16xf32> -> tensor<?x4x16x?xf32>
  %vt = ingot.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %s = ingot.matmul %qt, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  %d = ingot.div %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %a = ingot.add %d, %mask : (tensor<?x4x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x?x?xf32>
  %p = ingot.softmax %a {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = ingot.matmul %p, %vt : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %y = ingot.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// -----

// A scale multiplied in on the left, no mask, a value head dim of its own,
// and a result read as [B, H, S, Dv]: a transpose restores that layout.
// CHECK-LABEL: func.func @no_mask
// CHECK: %[[O:.*]] = ingot.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64} : (tensor<2x5x3x8xf32>, tensor<2x7x3x8xf32>, tensor<2x7x3x6xf32>) -> tensor<2x5x3x6xf32>
// CHECK: %[[T:.*]] = ingot.transpose %[[O]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x3x6xf32> -> tensor<2x3x5x6xf32>
// CHECK: return %[[T]]
func.func @no_mask(%q: tensor<2x5x3x8xf32>, %k: tensor<2x7x3x8xf32>, %v: tensor<2x7x3x6xf32>) -> tensor<2x3x5x6xf32> {
  %c = ingot.constant dense<0.125> : tensor<f32>
  %qt = ingot.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x3x8xf32> -> tensor<2x3x5x8xf32>
  %kt = ingot.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x7x3x8xf32> -> tensor<2x3x8x7xf32>
  %vt = ingot.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x7x3x6xf32> -> tensor<2x3x7x6xf32>
  %s = ingot.matmul %qt, %kt : (tensor<2x3x5x8xf32>, tensor<2x3x8x7xf32>) -> tensor<2x3x5x7xf32>
  %m = ingot.mul %c, %s : (tensor<f32>, tensor<2x3x5x7xf32>) -> tensor<2x3x5x7xf32>
  %p = ingot.softmax %m {axis = -1 : i64} : tensor<2x3x5x7xf32>
  %o = ingot.matmul %p, %vt : (tensor<2x3x5x7xf32>, tensor<2x3x7x6xf32>) -> tensor<2x3x5x6xf32>
  return %o : tensor<2x3x5x6xf32>
}

// -----

// Must not fire: softmax over the query axis, a key transposed like q
// (perm [0, 2, 1, 3] of a [B, D, H, S] tensor is no kᵀ of [B, S, H, D]),
// and probabilities also returned (they must exist in memory).
// CHECK-LABEL: func.func @must_not_fuse
// CHECK-NOT: ingot.attention
// CHECK-COUNT-3: ingot.softmax
func.func @must_not_fuse(%q: tensor<1x4x2x8xf32>, %k: tensor<1x4x2x8xf32>, %v: tensor<1x4x2x8xf32>, %k2: tensor<1x8x2x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %qt = ingot.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xf32> -> tensor<1x2x4x8xf32>
  %kt = ingot.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x2x8xf32> -> tensor<1x2x8x4xf32>
  %kq = ingot.transpose %k2 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
  %vt = ingot.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xf32> -> tensor<1x2x4x8xf32>
  %s0 = ingot.matmul %qt, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p0 = ingot.softmax %s0 {axis = 2 : i64} : tensor<1x2x4x4xf32>
  %o0 = ingot.matmul %p0, %vt : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s1 = ingot.matmul %qt, %kq : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p1 = ingot.softmax %s1 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o1 = ingot.matmul %p1, %vt : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s2 = ingot.matmul %qt, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = ingot.softmax %s2 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o2 = ingot.matmul %p2, %vt : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o0, %o1, %o2, %p2 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}
