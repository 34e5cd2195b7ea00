// RUN: ingot-opt %s --split-input-file | ingot-opt --split-input-file | FileCheck %s

// Round trips of the decoder-LLM ops, with 16-bit weights kept as stored.

// CHECK-LABEL: func.func @linear_nk_bf16
// CHECK:         ingot.linear %{{.+}}, %{{.+}} {w_layout = "nk"} : (tensor<?x576xf32>, tensor<1536x576xbf16>) -> tensor<?x1536xf32>
func.func @linear_nk_bf16(%x: tensor<?x576xf32>, %w: tensor<1536x576xbf16>) -> tensor<?x1536xf32> {
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x576xf32>, tensor<1536x576xbf16>) -> tensor<?x1536xf32>
  return %y : tensor<?x1536xf32>
}

// -----

// CHECK-LABEL: func.func @linear_kn_bias
// CHECK:         ingot.linear %{{.+}}, %{{.+}}, %{{.+}} {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x192xf16>, tensor<192xf16>) -> tensor<?x192xf32>
func.func @linear_kn_bias(%x: tensor<?x64xf32>, %w: tensor<64x192xf16>, %b: tensor<192xf16>) -> tensor<?x192xf32> {
  %y = ingot.linear %x, %w, %b {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x192xf16>, tensor<192xf16>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

// -----

// CHECK-LABEL: func.func @norm_and_activations
// CHECK:         ingot.rms_norm %{{.+}}, %{{.+}} {epsilon = 9.99999974E-6 : f32}
// CHECK:         ingot.silu_mul
// CHECK:         ingot.gelu %{{.+}} {approximate = "tanh"} : tensor<?x64xf32>
func.func @norm_and_activations(%x: tensor<?x64xf32>, %w: tensor<64xbf16>) -> tensor<?x64xf32> {
  %n = ingot.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x64xf32>, tensor<64xbf16>) -> tensor<?x64xf32>
  %h = ingot.silu_mul %n, %x : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %g = ingot.gelu %h {approximate = "tanh"} : tensor<?x64xf32>
  return %g : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @rope_and_attention
// CHECK:         %[[Q:.+]] = ingot.rope %{{.+}}, %[[P:.+]] {{{.*}}scaling = "llama3"{{.*}}} : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
// CHECK:         ingot.paged_attention %[[Q]], %{{.+}}, %{{.+}}, %[[P]], %{{.+}}, %{{.+}}, %{{.+}} {{{.*}}num_heads = 4 : i64, num_kv_heads = 2 : i64{{.*}}}
func.func @rope_and_attention(%q: tensor<?x64xf32>, %k: tensor<?x32xf32>, %v: tensor<?x32xf32>,
                              %pos: tensor<?xi64>, %slots: tensor<?xi64>, %tables: tensor<?x?xi32>,
                              %ends: tensor<?xi64>) -> tensor<?x64xf32> {
  %qr = ingot.rope %q, %pos {num_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64,
      theta = 5.0e+05 : f64, scaling = "llama3", factor = 8.0 : f64, low_freq_factor = 1.0 : f64,
      high_freq_factor = 4.0 : f64, original_max_positions = 8192 : i64}
      : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %o = ingot.paged_attention %qr, %k, %v, %pos, %slots, %tables, %ends {layer = 0 : i64,
      num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64,
      sliding_window = 0 : i64}
      : (tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xi64>, tensor<?xi64>,
         tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}
