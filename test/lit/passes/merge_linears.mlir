// RUN: ingot-opt %s --ingot-merge-linears --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-merge-linears=max-merged=2 --split-input-file | FileCheck %s --check-prefix=MAX2

// Q, K, V of one input: one linear over the concatenated weights, then
// column slices in the original order.
// CHECK-LABEL: func.func @qkv
// CHECK: %[[W:.*]] = ingot.param "q+k+v" {parts = ["q", "k", "v"]} : tensor<128x64xf32>
// CHECK: %[[M:.*]] = ingot.linear %arg0, %[[W]] {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
// CHECK: ingot.slice %[[M]]
// CHECK-SAME: -> tensor<?x64xf32>
// CHECK: ingot.slice %[[M]]
// CHECK-SAME: -> tensor<?x32xf32>
// CHECK: ingot.slice %[[M]]
// CHECK-SAME: -> tensor<?x32xf32>
// CHECK-NOT: ingot.linear
// max-merged=2: q and k merge, v is a group of one and stays as it was.
// MAX2-LABEL: func.func @qkv
// MAX2-NOT: "q+k+v"
// MAX2: %[[W:.*]] = ingot.param "q+k" {parts = ["q", "k"]} : tensor<96x64xf32>
// MAX2: ingot.linear %arg0, %[[W]] {w_layout = "nk"} : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
// MAX2: ingot.linear %arg0, %2 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
// MAX2-NOT: "q+k+v"
func.func @qkv(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %wq = ingot.param "q" : tensor<64x64xf32>
  %wk = ingot.param "k" : tensor<32x64xf32>
  %wv = ingot.param "v" : tensor<32x64xf32>
  %q = ingot.linear %x, %wq {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %k = ingot.linear %x, %wk {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %v = ingot.linear %x, %wv {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  return %q, %k, %v : tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Gate/up with biases: the biases merge too, and silu_mul reads the merged
// tensor in place.
// CHECK-LABEL: func.func @gate_up
// CHECK-DAG: %[[W:.*]] = ingot.param "g+u" {parts = ["g", "u"]} : tensor<256x64xbf16>
// CHECK-DAG: %[[B:.*]] = ingot.param "gb+ub" {parts = ["gb", "ub"]} : tensor<256xbf16>
// CHECK: %[[M:.*]] = ingot.linear %arg0, %[[W]], %[[B]]
// CHECK: %[[H:.*]] = ingot.silu_mul %[[M]] : (tensor<?x256xf32>) -> tensor<?x128xf32>
// CHECK: return %[[H]]
func.func @gate_up(%x: tensor<?x64xf32>) -> tensor<?x128xf32> {
  %wg = ingot.param "g" : tensor<128x64xbf16>
  %wu = ingot.param "u" : tensor<128x64xbf16>
  %bg = ingot.param "gb" : tensor<128xbf16>
  %bu = ingot.param "ub" : tensor<128xbf16>
  %g = ingot.linear %x, %wg, %bg {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xbf16>, tensor<128xbf16>) -> tensor<?x128xf32>
  %u = ingot.linear %x, %wu, %bu {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xbf16>, tensor<128xbf16>) -> tensor<?x128xf32>
  %h = ingot.silu_mul %g, %u : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  return %h : tensor<?x128xf32>
}

// -----

// GPT-2's Conv1D layout concatenates along the columns.
// CHECK-LABEL: func.func @kn
// CHECK: ingot.param "a+b" {concat_axis = 1 : i64, parts = ["a", "b"]} : tensor<64x96xf32>
func.func @kn(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x32xf32>) {
  %wa = ingot.param "a" : tensor<64x64xf32>
  %wb = ingot.param "b" : tensor<64x32xf32>
  %a = ingot.linear %x, %wa {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %b = ingot.linear %x, %wb {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %a, %b : tensor<?x64xf32>, tensor<?x32xf32>
}

// -----

// Must not merge: different inputs, different weight dtypes, a bias on only
// one of them, or a weight that is not a param.
// CHECK-LABEL: func.func @no_merge
// CHECK-COUNT-5: ingot.linear
// CHECK-NOT: parts
func.func @no_merge(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>, %wt: tensor<32x64xf32>)
    -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %w1 = ingot.param "w1" : tensor<32x64xf32>
  %w2 = ingot.param "w2" : tensor<32x64xf16>
  %w3 = ingot.param "w3" : tensor<32x64xf32>
  %b3 = ingot.param "b3" : tensor<32xf32>
  %a = ingot.linear %x, %w1 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %b = ingot.linear %y, %w1 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %c = ingot.linear %x, %w2 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf16>) -> tensor<?x32xf32>
  %d = ingot.linear %x, %w3, %b3 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %e = ingot.linear %y, %wt {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  return %a, %b, %c, %d, %e : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// silu_mul of halves in the wrong order keeps its two operands.
// CHECK-LABEL: func.func @swapped_halves
// CHECK: ingot.silu_mul %{{.*}}, %{{.*}} : (tensor<?x128xf32>, tensor<?x128xf32>)
func.func @swapped_halves(%x: tensor<?x64xf32>) -> tensor<?x128xf32> {
  %wg = ingot.param "g" : tensor<128x64xf32>
  %wu = ingot.param "u" : tensor<128x64xf32>
  %g = ingot.linear %x, %wg {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %u = ingot.linear %x, %wu {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %h = ingot.silu_mul %u, %g : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  return %h : tensor<?x128xf32>
}
