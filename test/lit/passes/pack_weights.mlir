// RUN: ingot-opt %s --ingot-pack-weights="element-types=f32,bf16,f16" --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-pack-weights --split-input-file | FileCheck %s --check-prefix=DEFAULT

// By default only 16-bit weights are packed (f32 measured no faster).
// DEFAULT-LABEL: func.func @packs
// DEFAULT-NOT: nk16
// DEFAULT-LABEL: func.func @shared_bf16
// DEFAULT: layout = "nk16"

// A row-major "nk" weight param is replaced by its packed copy.
// CHECK-LABEL: func.func @packs
// CHECK-NOT: ingot.param "q.weight" :
// CHECK: %[[W:.+]] = ingot.param "q.weight@nk16" {{{.*}}layout = "nk16"{{.*}}parts = ["q.weight"]{{.*}}} : tensor<64x64xf32>
// CHECK: ingot.linear %arg0, %[[W]] {{{.*}}w_layout = "nk16"{{.*}}}
func.func @packs(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %w = ingot.param "q.weight" : tensor<64x64xf32>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// One packed param per original; the epilogue operands and attrs stay.
// CHECK-LABEL: func.func @shared_bf16
// CHECK-COUNT-1: ingot.param "up.weight@nk16"
// CHECK-NOT: ingot.param "up.weight@nk16"
// CHECK: ingot.linear %arg0, %[[W:.+]], %{{.+}} residual %arg1 {activation = "silu", w_layout = "nk16"}
// CHECK: ingot.linear %arg0, %[[W]] {w_layout = "nk16"}
func.func @shared_bf16(%x: tensor<?x32xf32>, %r: tensor<?x48xf32>) -> (tensor<?x48xf32>, tensor<?x48xf32>) {
  %w = ingot.param "up.weight" : tensor<48x32xbf16>
  %b = ingot.param "up.bias" : tensor<48xbf16>
  %y = ingot.linear %x, %w, %b residual %r {activation = "silu", w_layout = "nk"} : (tensor<?x32xf32>, tensor<48x32xbf16>, tensor<48xbf16>, tensor<?x48xf32>) -> tensor<?x48xf32>
  %z = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x32xf32>, tensor<48x32xbf16>) -> tensor<?x48xf32>
  return %y, %z : tensor<?x48xf32>, tensor<?x48xf32>
}

// -----

// A tied embedding is not packed: the gather needs the row-major table and
// a packed copy would store the weights twice.
// CHECK-LABEL: func.func @tied
// CHECK: %[[E:.+]] = ingot.param "embed" : tensor<100x16xf32>
// CHECK: ingot.gather %[[E]]
// CHECK: ingot.linear %{{.+}}, %[[E]] {w_layout = "nk"}
// CHECK-NOT: nk16
func.func @tied(%ids: tensor<?xi64>) -> tensor<?x100xf32> {
  %e = ingot.param "embed" : tensor<100x16xf32>
  %h = ingot.gather %e, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %y = ingot.linear %h, %e {w_layout = "nk"} : (tensor<?x16xf32>, tensor<100x16xf32>) -> tensor<?x100xf32>
  return %y : tensor<?x100xf32>
}

// -----

// A merged projection keeps its parts and axis; the packed name extends
// the merged one.
// CHECK-LABEL: func.func @merged
// CHECK: ingot.param "q+k@nk16" {{{.*}}layout = "nk16", parts = ["q.weight", "k.weight"]{{.*}}} : tensor<96x64xf16>
// CHECK: w_layout = "nk16"
func.func @merged(%x: tensor<?x64xf32>) -> tensor<?x96xf32> {
  %w = ingot.param "q+k" {parts = ["q.weight", "k.weight"]} : tensor<96x64xf16>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<96x64xf16>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// -----

// Not packed: "kn" weights, fewer rows than min-rows (16), a weight that
// is not a param, one already packed.
// CHECK-LABEL: func.func @leaves
// CHECK-NOT: @nk16"
// CHECK: ingot.linear %arg0, %{{.+}} {w_layout = "kn"}
// CHECK: ingot.linear %arg0, %{{.+}} {w_layout = "nk"}
// CHECK: ingot.linear %arg0, %arg1 {w_layout = "nk"}
// CHECK: ingot.linear %arg0, %{{.+}} {w_layout = "nk16"}
func.func @leaves(%x: tensor<?x64xf32>, %wa: tensor<32x64xf32>) -> (tensor<?x32xf32>, tensor<?x8xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %kn = ingot.param "c_attn.weight" : tensor<64x32xf32>
  %a = ingot.linear %x, %kn {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %small = ingot.param "small.weight" : tensor<8x64xf32>
  %b = ingot.linear %x, %small {w_layout = "nk"} : (tensor<?x64xf32>, tensor<8x64xf32>) -> tensor<?x8xf32>
  %c = ingot.linear %x, %wa {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %p = ingot.param "done" {layout = "nk16"} : tensor<32x64xf32>
  %d = ingot.linear %x, %p {w_layout = "nk16"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  return %a, %b, %c, %d : tensor<?x32xf32>, tensor<?x8xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}
