// RUN: ingot-opt %s --split-input-file --verify-diagnostics

func.func @linear_bad_layout(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{w_layout must be "nk", "kn", "nk16" or "q16", got "mk"}}
  %y = ingot.linear %x, %w {w_layout = "mk"} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

func.func @linear_inner_dim(%x: tensor<?x48xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{inner dims differ: x has 48, the weight 64}}
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x48xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

func.func @linear_bias_size(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>, %b: tensor<16xf32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{bias must be [32]}}
  %y = ingot.linear %x, %w, %b {w_layout = "nk"} : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<16xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

func.func @rms_norm_weight(%x: tensor<?x64xf32>, %w: tensor<32xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{weight must be 1-D and match the last dim}}
  %y = ingot.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x64xf32>, tensor<32xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @rope_odd_rotary_dim(%x: tensor<?x64xf32>, %p: tensor<?xi64>) -> tensor<?x64xf32> {
  // expected-error @+1 {{rotary_dim must be even and in (0, head_dim]}}
  %y = ingot.rope %x, %p {num_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 7 : i64,
      theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64, low_freq_factor = 1.0 : f64,
      high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64}
      : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @rope_unknown_scaling(%x: tensor<?x64xf32>, %p: tensor<?xi64>) -> tensor<?x64xf32> {
  // expected-error @+1 {{scaling must be "none", "linear" or "llama3"}}
  %y = ingot.rope %x, %p {num_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64,
      theta = 1.0e+04 : f64, scaling = "yarn", factor = 1.0 : f64, low_freq_factor = 1.0 : f64,
      high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64}
      : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @attention_heads_not_multiple(%q: tensor<?x48xf32>, %k: tensor<?x32xf32>, %v: tensor<?x32xf32>,
                                        %pos: tensor<?xi64>, %slots: tensor<?xi64>, %tables: tensor<?x?xi32>,
                                        %ends: tensor<?xi64>) -> tensor<?x48xf32> {
  // expected-error @+1 {{num_heads must be a positive multiple of num_kv_heads}}
  %o = ingot.paged_attention %q, %k, %v, %pos, %slots, %tables, %ends {layer = 0 : i64,
      num_heads = 3 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64,
      sliding_window = 0 : i64}
      : (tensor<?x48xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xi64>, tensor<?xi64>,
         tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x48xf32>
  return %o : tensor<?x48xf32>
}

// -----

func.func @attention_feature_mismatch(%q: tensor<?x64xf32>, %k: tensor<?x16xf32>, %v: tensor<?x32xf32>,
                                      %pos: tensor<?xi64>, %slots: tensor<?xi64>, %tables: tensor<?x?xi32>,
                                      %ends: tensor<?xi64>) -> tensor<?x64xf32> {
  // expected-error @+1 {{query needs num_heads*head_dim and key/value num_kv_heads*head_dim features from their offsets}}
  %o = ingot.paged_attention %q, %k, %v, %pos, %slots, %tables, %ends {layer = 0 : i64,
      num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64,
      sliding_window = 0 : i64}
      : (tensor<?x64xf32>, tensor<?x16xf32>, tensor<?x32xf32>, tensor<?xi64>, tensor<?xi64>,
         tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}
