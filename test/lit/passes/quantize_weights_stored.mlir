// RUN: ingot-opt %s --ingot-quantize-weights="mode=stored" --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-quantize-weights="mode=stored exclude=*embd*" --split-input-file | FileCheck %s --check-prefix=EXCL

// Each linear weight and the embedding table take their stored format; the
// tied table gets one quantised param shared by the gather and lm_head,
// and the original goes once nothing reads it. A norm weight (not a linear
// or gather operand) stays, although the attribute names it.
// CHECK-LABEL: func.func @tied
// CHECK-NOT: ingot.param "token_embd" :
// CHECK: %[[E:.+]] = ingot.param "token_embd@q8g32" {parts = ["token_embd"], quant = #ingot.quant<"q8", group = 32>} : tensor<128x64xf32>
// CHECK: ingot.gather %[[E]], %arg1
// CHECK: %[[Q:.+]] = ingot.param "q@q4mg32" {parts = ["q"], quant = #ingot.quant<"q4m", group = 32>}
// CHECK: ingot.param "norm" :
// CHECK: ingot.linear %{{.+}}, %[[Q]]
// CHECK: ingot.linear %{{.+}}, %[[E]]
// EXCL-LABEL: func.func @tied
// EXCL: ingot.param "token_embd" :
// EXCL: ingot.param "q@q4mg32"
// EXCL-NOT: token_embd@
func.func @tied(%x: tensor<?x64xf32>, %ids: tensor<?xi64>) -> (tensor<?x64xf32>, tensor<?x128xf32>) attributes {ingot.stored_formats = {token_embd = #ingot.quant<"q8", group = 32>, q = #ingot.quant<"q4m", group = 32>, norm = #ingot.quant<"q8", group = 32>}} {
  %e = ingot.param "token_embd" : tensor<128x64xf32>
  %rows = ingot.gather %e, %ids {axis = 0 : i64} : (tensor<128x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %q = ingot.param "q" : tensor<64x64xf32>
  %n = ingot.param "norm" : tensor<64xf32>
  %h = ingot.rms_norm %rows, %n {epsilon = 1.0e-05 : f32} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %y = ingot.linear %h, %q {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %l = ingot.linear %y, %e {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  return %y, %l : tensor<?x64xf32>, tensor<?x128xf32>
}

// -----

// Merged projections keep a stored format only when every part has the
// same one; q4m + q8 parts, a part missing from the table, and a function
// without the attribute all leave the weight as it is.
// CHECK-LABEL: func.func @merged
// CHECK: ingot.param "qk@q4mg32" {parts = ["q", "k"], quant = #ingot.quant<"q4m", group = 32>}
// CHECK: ingot.param "qv" {parts = ["q", "v"]}
// CHECK: ingot.param "qo" {parts = ["q", "o"]}
func.func @merged(%x: tensor<?x64xf32>) -> (tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>) attributes {ingot.stored_formats = {q = #ingot.quant<"q4m", group = 32>, k = #ingot.quant<"q4m", group = 32>, v = #ingot.quant<"q8", group = 32>}} {
  %qk = ingot.param "qk" {parts = ["q", "k"]} : tensor<128x64xf32>
  %qv = ingot.param "qv" {parts = ["q", "v"]} : tensor<128x64xf32>
  %qo = ingot.param "qo" {parts = ["q", "o"]} : tensor<128x64xf32>
  %a = ingot.linear %x, %qk {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %b = ingot.linear %x, %qv {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %c = ingot.linear %x, %qo {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  return %a, %b, %c : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>
}

// -----

// CHECK-LABEL: func.func @no_table
// CHECK-NOT: #ingot.quant
func.func @no_table(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %q = ingot.param "q" : tensor<64x64xf32>
  %y = ingot.linear %x, %q {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
