// RUN: ingot-opt %s --ingot-fuse-rope-attention --split-input-file | FileCheck %s
// RUN: ingot-opt %s --ingot-fuse-rope-attention=rope=false --split-input-file | FileCheck %s --check-prefix=NOROPE

// q, k: rope of column slices of one merged qkv; v: a slice. All fold into
// one rope_paged_attention reading qkv at offsets 0, 64, 96; the score
// soft-cap (Gemma 2) goes with it.
// CHECK-LABEL: func.func @merged_rope
// CHECK-NOT: ingot.rope
// CHECK: ingot.rope_paged_attention %arg0, %arg0, %arg0, %arg1, %arg2, %arg3, %arg4
// CHECK-SAME: k_offset = 64 : i64
// CHECK-SAME: q_offset = 0 : i64
// CHECK-SAME: rotary_dim = 16 : i64
// CHECK-SAME: softcap = 5.000000e+00 : f64
// CHECK-SAME: v_offset = 96 : i64
// rope=false: both ropes stay and the attention reads them; only v's slice
// folds into an offset.
// NOROPE-LABEL: func.func @merged_rope
// NOROPE-NOT: rope_paged_attention
// NOROPE: %[[Q:[0-9]+]] = ingot.rope
// NOROPE: %[[K:[0-9]+]] = ingot.rope
// NOROPE: ingot.paged_attention %[[Q]], %[[K]], %arg0, %arg1
// NOROPE-SAME: v_offset = 96 : i64
// NOROPE-NOT: rope_paged_attention
func.func @merged_rope(%qkv: tensor<?x128xf32>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %tables: tensor<?x?xi32>, %ends: tensor<?xi64>) -> tensor<?x64xf32> {
  %one = ingot.constant dense<1> : tensor<1xi64>
  %c0 = ingot.constant dense<0> : tensor<1xi64>
  %c64 = ingot.constant dense<64> : tensor<1xi64>
  %c96 = ingot.constant dense<96> : tensor<1xi64>
  %c128 = ingot.constant dense<128> : tensor<1xi64>
  %q0 = ingot.slice %qkv, %c0, %c64, %one, %one : (tensor<?x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x64xf32>
  %k0 = ingot.slice %qkv, %c64, %c96, %one, %one : (tensor<?x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x32xf32>
  %v = ingot.slice %qkv, %c96, %c128, %one, %one : (tensor<?x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x32xf32>
  %q = ingot.rope %q0, %pos {num_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64} : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %k = ingot.rope %k0, %pos {num_heads = 2 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64} : (tensor<?x32xf32>, tensor<?xi64>) -> tensor<?x32xf32>
  %o = ingot.paged_attention %q, %k, %v, %pos, %slots, %tables, %ends {layer = 0 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64, sliding_window = 0 : i64, softcap = 5.0 : f64}
      : (tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}

// -----

// No rope (GPT-2): only the slices fold, into paged_attention offsets.
// CHECK-LABEL: func.func @merged_no_rope
// CHECK: ingot.paged_attention %arg0, %arg0, %arg0
// CHECK-SAME: k_offset = 64 : i64
func.func @merged_no_rope(%qkv: tensor<?x192xf32>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %tables: tensor<?x?xi32>, %ends: tensor<?xi64>) -> tensor<?x64xf32> {
  %one = ingot.constant dense<1> : tensor<1xi64>
  %c0 = ingot.constant dense<0> : tensor<1xi64>
  %c64 = ingot.constant dense<64> : tensor<1xi64>
  %c128 = ingot.constant dense<128> : tensor<1xi64>
  %c192 = ingot.constant dense<192> : tensor<1xi64>
  %q = ingot.slice %qkv, %c0, %c64, %one, %one : (tensor<?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x64xf32>
  %k = ingot.slice %qkv, %c64, %c128, %one, %one : (tensor<?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x64xf32>
  %v = ingot.slice %qkv, %c128, %c192, %one, %one : (tensor<?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x64xf32>
  %o = ingot.paged_attention %q, %k, %v, %pos, %slots, %tables, %ends {layer = 0 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64, sliding_window = 0 : i64}
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}

// -----

// Must not fuse the rope: q's rotation is also returned (it would run
// anyway), and k rotates by other positions.
// CHECK-LABEL: func.func @rope_used_elsewhere
// CHECK: ingot.rope
// CHECK: ingot.rope
// CHECK: ingot.paged_attention
// CHECK-NOT: rope_paged_attention
func.func @rope_used_elsewhere(%q0: tensor<?x64xf32>, %k0: tensor<?x32xf32>, %v: tensor<?x32xf32>, %pos: tensor<?xi64>, %pos2: tensor<?xi64>, %slots: tensor<?xi64>, %tables: tensor<?x?xi32>, %ends: tensor<?xi64>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %q = ingot.rope %q0, %pos {num_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64} : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %k = ingot.rope %k0, %pos2 {num_heads = 2 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64} : (tensor<?x32xf32>, tensor<?xi64>) -> tensor<?x32xf32>
  %o = ingot.paged_attention %q, %k, %v, %pos, %slots, %tables, %ends {layer = 0 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64, sliding_window = 0 : i64}
      : (tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %o, %q : tensor<?x64xf32>, tensor<?x64xf32>
}
