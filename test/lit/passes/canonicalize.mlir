// RUN: ingot-opt %s --split-input-file --ingot-canonicalize | FileCheck %s
// RUN: ingot-opt %s --split-input-file --ingot-canonicalize | FileCheck %s --check-prefix=FOLDED
// RUN: ingot-opt %s --split-input-file --ingot-canonicalize=max-iterations=1 | FileCheck %s
// RUN: ingot-opt %s --split-input-file --ingot-canonicalize=max-iterations=1 | FileCheck %s --check-prefix=FOLDED
// RUN: ingot-opt %s --split-input-file --ingot-canonicalize=max-iterations=0 | FileCheck %s --check-prefix=NONE

// --ingot-canonicalize end to end on the shape subgraph an exported causal
// language model builds its attention mask with. On a static input every
// shape vector folds to a constant; the ops that produce data stay.
//
// The worklist revisits the users of each folded op, so a single round
// (max-iterations=1) already folds the whole chain; max-iterations=0 runs no
// round at all and leaves the IR exactly as written, dead ops included.

// Where the constants land depends on the number of rounds, so the checks
// do not fix their order.
// CHECK-LABEL: func.func @causal_mask
// CHECK-SAME:    (%[[SCORES:.+]]: tensor<1x4x16x16xf32>, %[[X:.+]]: tensor<1x16x64xf32>)
// CHECK-DAG:     %[[TGT:.+]] = ingot.constant dense<[1, 1, 16, 16]> : tensor<4xi64>
// CHECK-DAG:     %[[BIG:.+]] = ingot.constant dense<-1.000000e+09> : tensor<f32>
// CHECK-DAG:     %[[K:.+]] = ingot.constant dense<1> : tensor<i64>
// CHECK-DAG:     %[[SS:.+]] = ingot.constant dense<16> : tensor<2xi64>
// CHECK-DAG:     %[[ONES:.+]] = ingot.constant_of_shape %[[SS]] {value = 1.000000e+00 : f64} : tensor<2xi64> -> tensor<16x16xf32>
// CHECK-DAG:     %[[UPPER:.+]] = ingot.trilu %[[ONES]], %[[K]] {upper = 1 : i64} : (tensor<16x16xf32>, tensor<i64>) -> tensor<16x16xf32>
// CHECK-DAG:     %[[MASK:.+]] = ingot.mul %[[UPPER]], %[[BIG]] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16x16xf32>
// CHECK-DAG:     %[[M4:.+]] = ingot.reshape %[[MASK]], %[[TGT]] {allowzero = 0 : i64} : (tensor<16x16xf32>, tensor<4xi64>) -> tensor<1x1x16x16xf32>
// CHECK:         %[[R:.+]] = ingot.add %[[SCORES]], %[[M4]] : (tensor<1x4x16x16xf32>, tensor<1x1x16x16xf32>) -> tensor<1x4x16x16xf32>
// CHECK-NEXT:    return %[[R]]

// FOLDED-LABEL: func.func @causal_mask
// FOLDED-NOT:     ingot.shape
// FOLDED-NOT:     ingot.gather
// FOLDED-NOT:     ingot.concat
// FOLDED:         return

// NONE-LABEL: func.func @causal_mask
// NONE:         ingot.shape
// NONE:         ingot.gather
// NONE:         ingot.concat
// NONE:         ingot.constant_of_shape
// NONE:         ingot.concat
// NONE:         ingot.reshape
func.func @causal_mask(%scores: tensor<1x4x16x16xf32>, %x: tensor<1x16x64xf32>) -> tensor<1x4x16x16xf32> {
  // seq = shape(x)[1]
  %s = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<1x16x64xf32> -> tensor<3xi64>
  %i = ingot.constant dense<[1]> : tensor<1xi64>
  %seq = ingot.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  // A seq x seq matrix of ones, its strict upper triangle scaled to -1e9.
  %ss = ingot.concat %seq, %seq {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %ones = ingot.constant_of_shape %ss {value = 1.0 : f64} : tensor<2xi64> -> tensor<16x16xf32>
  %k = ingot.constant dense<1> : tensor<i64>
  %upper = ingot.trilu %ones, %k {upper = 1 : i64} : (tensor<16x16xf32>, tensor<i64>) -> tensor<16x16xf32>
  %big = ingot.constant dense<-1.0e9> : tensor<f32>
  %mask = ingot.mul %upper, %big : (tensor<16x16xf32>, tensor<f32>) -> tensor<16x16xf32>
  // Broadcast over batch and heads: reshape to [1, 1, seq, seq].
  %lead = ingot.constant dense<[1, 1]> : tensor<2xi64>
  %tgt = ingot.concat %lead, %ss {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %m4 = ingot.reshape %mask, %tgt {allowzero = 0 : i64} : (tensor<16x16xf32>, tensor<4xi64>) -> tensor<1x1x16x16xf32>
  %r = ingot.add %scores, %m4 : (tensor<1x4x16x16xf32>, tensor<1x1x16x16xf32>) -> tensor<1x4x16x16xf32>
  return %r : tensor<1x4x16x16xf32>
}

// -----

// Position ids for the last token: seq - 1, then an unsqueeze to [1, 1],
// with a dead Shape left over from the exporter.
// CHECK-LABEL: func.func @last_position
// CHECK-NEXT:    %[[P:.+]] = ingot.constant dense<15> : tensor<1x1xi64>
// CHECK-NEXT:    return %[[P]]

// FOLDED-LABEL: func.func @last_position
// FOLDED-NOT:     ingot.shape
// FOLDED-NOT:     ingot.sub
// FOLDED-NOT:     ingot.unsqueeze
// FOLDED:         return

// NONE-LABEL: func.func @last_position
// NONE:         ingot.shape
// NONE:         ingot.sub
// NONE:         ingot.unsqueeze
// NONE:         ingot.shape
func.func @last_position(%x: tensor<1x16x64xf32>) -> tensor<1x1xi64> {
  %s = ingot.shape %x {start = 1 : i64, end = 2 : i64} : tensor<1x16x64xf32> -> tensor<1xi64>
  %one = ingot.constant dense<1> : tensor<1xi64>
  %last = ingot.sub %s, %one : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %p = ingot.unsqueeze %last {axes = array<i64: 0>} : tensor<1xi64> -> tensor<1x1xi64>
  %dead = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<1x16x64xf32> -> tensor<3xi64>
  return %p : tensor<1x1xi64>
}

// -----

// jax2tf slices whole tensors around its convs (starts 0, steps 1, ends of
// 10^9 on the dynamic batch dim and past the static ones): the slice is its
// input. A slice that stops short of a static dim, starts past 0, steps by
// 2, or ends below 10^9 on a dynamic dim stays.
// CHECK-LABEL: func.func @identity_slices
// CHECK-COUNT-4: ingot.slice %arg0
// CHECK-NOT: ingot.slice
// CHECK: return %arg0,
// FOLDED-LABEL: func.func @identity_slices
// NONE-LABEL: func.func @identity_slices
// NONE-COUNT-5: ingot.slice
func.func @identity_slices(%x: tensor<?x4x6xf32>) -> (tensor<?x4x6xf32>, tensor<?x4x5xf32>, tensor<?x3x6xf32>, tensor<?x4x3xf32>, tensor<?x4x6xf32>) {
  %zeros = ingot.constant dense<0> : tensor<3xi32>
  %ones = ingot.constant dense<1> : tensor<3xi32>
  %axes = ingot.constant dense<[0, 1, 2]> : tensor<3xi32>
  %all = ingot.constant dense<1000000000> : tensor<3xi32>
  %short = ingot.constant dense<[1000000000, 4, 5]> : tensor<3xi32>
  %from1 = ingot.constant dense<[0, 1, 0]> : tensor<3xi32>
  %by2 = ingot.constant dense<[1, 1, 2]> : tensor<3xi32>
  %batchShort = ingot.constant dense<[99999, 4, 6]> : tensor<3xi32>
  %a = ingot.slice %x, %zeros, %all, %axes, %ones : (tensor<?x4x6xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x4x6xf32>
  %b = ingot.slice %x, %zeros, %short, %axes, %ones : (tensor<?x4x6xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x4x5xf32>
  %c = ingot.slice %x, %from1, %all, %axes, %ones : (tensor<?x4x6xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x3x6xf32>
  %d = ingot.slice %x, %zeros, %all, %axes, %by2 : (tensor<?x4x6xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x4x3xf32>
  %e = ingot.slice %x, %zeros, %batchShort, %axes, %ones : (tensor<?x4x6xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<?x4x6xf32>
  return %a, %b, %c, %d, %e : tensor<?x4x6xf32>, tensor<?x4x5xf32>, tensor<?x3x6xf32>, tensor<?x4x3xf32>, tensor<?x4x6xf32>
}
