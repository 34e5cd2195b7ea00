// RUN: ingot-opt %s --ingot-pack-weights="layout=q16" --split-input-file | FileCheck %s

// A q4m weight in groups of 32 with whole panels moves to a "q16" param
// that keeps its block format; the linear reads it as "q16".
// CHECK-LABEL: func.func @packs
// CHECK-NOT: ingot.param "q.weight@q4mg32" {quant
// CHECK: %[[W:.+]] = ingot.param "q.weight@q4mg32@q16" {layout = "q16", parts = ["q.weight@q4mg32"], quant = #ingot.quant<"q4m", group = 32>} : tensor<64x96xf32>
// CHECK: ingot.linear %arg0, %[[W]] {w_layout = "q16"}
func.func @packs(%x: tensor<?x96xf32>) -> tensor<?x64xf32> {
  %w = ingot.param "q.weight@q4mg32" {quant = #ingot.quant<"q4m", group = 32>} : tensor<64x96xf32>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x96xf32>, tensor<64x96xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// A tied q8 embedding moves with its lm_head: the gather reads "q16" rows,
// so the table is still stored once.
// CHECK-LABEL: func.func @tied
// CHECK: %[[E:.+]] = ingot.param "embed@q16" {layout = "q16"
// CHECK: ingot.gather %[[E]]
// CHECK: ingot.linear %{{.+}}, %[[E]] {w_layout = "q16"}
// CHECK-NOT: ingot.param "embed" {
func.func @tied(%ids: tensor<?xi64>) -> tensor<?x128xf32> {
  %e = ingot.param "embed" {quant = #ingot.quant<"q8", group = 32>} : tensor<128x64xf32>
  %h = ingot.gather %e, %ids {axis = 0 : i64} : (tensor<128x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %y = ingot.linear %h, %e {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// -----

// Must not fire: float weights, fp8, other group sizes, rows not a
// multiple of 16, columns not a multiple of 32, and a weight another op
// reads as something other than a gather table.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: q16
func.func @untouched(%x: tensor<?x64xf32>, %x48: tensor<?x48xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x24xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<64x64xf32>) {
  %f = ingot.param "f" : tensor<64x64xf32>
  %a = ingot.linear %x, %f {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %e4 = ingot.param "e4" {quant = #ingot.quant<"f8e4m3", group = 32>} : tensor<64x64xf32>
  %b = ingot.linear %x, %e4 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %g64 = ingot.param "g64" {quant = #ingot.quant<"q4", group = 64>} : tensor<64x64xf32>
  %c = ingot.linear %x, %g64 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %r24 = ingot.param "r24" {quant = #ingot.quant<"q4", group = 32>} : tensor<24x64xf32>
  %d = ingot.linear %x, %r24 {w_layout = "nk"} : (tensor<?x64xf32>, tensor<24x64xf32>) -> tensor<?x24xf32>
  %k48 = ingot.param "k48" {quant = #ingot.quant<"q8", group = 32>} : tensor<64x48xf32>
  %e = ingot.linear %x48, %k48 {w_layout = "nk"} : (tensor<?x48xf32>, tensor<64x48xf32>) -> tensor<?x64xf32>
  %s = ingot.param "s" {quant = #ingot.quant<"q8", group = 32>} : tensor<64x64xf32>
  %g = ingot.linear %x, %s {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %t = ingot.add %s, %s : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %a, %b, %c, %d, %e, %g, %t : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x24xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<64x64xf32>
}

// -----

// A q8 weight per output channel (one group of K a row) packs too; q8 in
// groups of 64 and q4 per channel do not.
// CHECK-LABEL: func.func @per_channel
// CHECK: %[[W:.+]] = ingot.param "w@q8g128@q16" {layout = "q16", parts = ["w@q8g128"], quant = #ingot.quant<"q8", group = 128>} : tensor<32x128xf32>
// CHECK: ingot.linear %arg0, %[[W]] {w_layout = "q16"}
// CHECK: ingot.param "g64" {quant
// CHECK: ingot.param "q4c" {quant
// CHECK-NOT: q16
func.func @per_channel(%x: tensor<?x128xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %w = ingot.param "w@q8g128" {quant = #ingot.quant<"q8", group = 128>} : tensor<32x128xf32>
  %a = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x128xf32>, tensor<32x128xf32>) -> tensor<?x32xf32>
  %g64 = ingot.param "g64" {quant = #ingot.quant<"q8", group = 64>} : tensor<32x128xf32>
  %b = ingot.linear %x, %g64 {w_layout = "nk"} : (tensor<?x128xf32>, tensor<32x128xf32>) -> tensor<?x32xf32>
  %q4c = ingot.param "q4c" {quant = #ingot.quant<"q4", group = 128>} : tensor<32x128xf32>
  %c = ingot.linear %x, %q4c {w_layout = "nk"} : (tensor<?x128xf32>, tensor<32x128xf32>) -> tensor<?x32xf32>
  return %a, %b, %c : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}
