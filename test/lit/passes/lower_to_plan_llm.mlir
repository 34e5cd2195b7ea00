// RUN: ingot-opt %s --ingot-compute-bounds="max-dims=tokens=8,seqs=2,blocks=4" --ingot-lower-to-plan --ingot-plan-memory | FileCheck %s

// One decoder step: linear without bias lists two operands, 16-bit
// weights stay 16-bit params, paged_attention survives as a step, and rope
// and silu_mul may write over an input that dies there.

// CHECK-LABEL: func.func @step
// CHECK-NOT:     plan.none
// CHECK:         %[[W:.+]] = plan.param "q_proj" : memref<64x64xbf16>
// CHECK:         plan.kernel "linear" ins(%{{.+}}, %[[W]] : memref<?x64xf32>, memref<64x64xbf16>)
// CHECK-SAME:      {args = {activation = "none", w_layout = "nk"}, origin = "q_proj"}
// CHECK:         %[[QR:.+]] = plan.alloc {max_shape = array<i64: 8, 64>, offset = [[QOFF:[0-9]+]] : i64}
// CHECK:         plan.kernel "rope"
// CHECK:         plan.kernel "paged_attention"
// CHECK-SAME:      origin = "attn"
func.func @step(%x: tensor<?x64xf32> {ingot.dims = ["tokens", ""]},
                %pos: tensor<?xi64> {ingot.dims = ["tokens"]},
                %slots: tensor<?xi64> {ingot.dims = ["tokens"]},
                %tables: tensor<?x?xi32> {ingot.dims = ["seqs", "blocks"]},
                %ends: tensor<?xi64> {ingot.dims = ["seqs"]}) -> tensor<?x64xf32> {
  %w = ingot.param "q_proj" : tensor<64x64xbf16>
  %q = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<64x64xbf16>) -> tensor<?x64xf32> loc("q_proj")
  %qr = ingot.rope %q, %pos {num_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64,
      theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64, low_freq_factor = 1.0 : f64,
      high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64}
      : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32> loc("rope")
  %o = ingot.paged_attention %qr, %x, %x, %pos, %slots, %tables, %ends {layer = 0 : i64,
      num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64,
      sliding_window = 0 : i64}
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, tensor<?xi64>,
         tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x64xf32> loc("attn")
  return %o : tensor<?x64xf32>
}
