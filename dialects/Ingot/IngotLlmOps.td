//===- IngotLlmOps.td - Decoder-LLM ops --------------------*- tablegen -*-===//
//
// Included from IngotOps.td. Activations are f32; weights may stay f16/bf16
// as stored and are widened inside the kernels. Token-major layout: a step
// processes `tokens` rows, hidden features along the last dim.
//
//===----------------------------------------------------------------------===//

def Ingot_WeightTensor : RankedTensorOf<[F32, F16, BF16]>;

def Ingot_LinearOp : Ingot_Op<"linear", [AttrSizedOperandSegments]> {
  let summary = "x times a weight matrix, with an optional fused epilogue";
  let description = [{
    `y = act(x · Wᵀ + b) + residual` with `w_layout = "nk"` (W is [N, K], as
    torch Linear stores it) or `y = act(x · W + b) + residual` with
    `w_layout = "kn"` (W is [K, N], as GPT-2's Conv1D stores it). x is
    [..., K] f32; W and b may be f16/bf16. `activation` is "none", "relu",
    "silu", "gelu" (erf) or "gelu_tanh"; it and `residual` (same shape as y)
    are set by ingot-fuse-linear-epilogue. A `w_layout` of "nk16" is W
    packed by ingot-pack-weights (docs/artifact-format.md); "q16" is a
    q8/q4/q4m W packed for int8 dot products, and x is then quantised per
    row in blocks of 32 to int8 (runtime/src/cpu/LinearQ16.h).

    ```mlir
    %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x576xf32>, tensor<1536x576xbf16>) -> tensor<?x1536xf32>
    %z = ingot.linear %x, %w, %b residual %r {activation = "none", w_layout = "nk"}
        : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_WeightTensor:$weight,
                   Optional<Ingot_WeightTensor>:$bias,
                   Optional<Ingot_Tensor>:$residual, StrAttr:$w_layout,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$activation);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? "
                       "(`residual` $residual^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_AddRmsNormOp : Ingot_Op<"add_rms_norm"> {
  let summary = "residual add followed by rms_norm, both results kept";
  let description = [{
    `sum = a + b` (same shapes) and `result = rms_norm(sum) · weight`: the
    pre-norm decoder's residual stream and the next sub-layer's input in
    one pass over memory. Made by ingot-fuse-add-norm.

    ```mlir
    %sum, %y = ingot.add_rms_norm %h, %o, %w {epsilon = 1.0e-05 : f32}
        : (tensor<?x576xf32>, tensor<?x576xf32>, tensor<576xf32>) -> (tensor<?x576xf32>, tensor<?x576xf32>)
    ```
  }];
  let arguments = (ins Ingot_Tensor:$lhs, Ingot_Tensor:$rhs,
                   Ingot_WeightTensor:$weight, F32Attr:$epsilon);
  let results = (outs Ingot_Tensor:$sum, Ingot_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` $weight attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_AddLayerNormOp : Ingot_Op<"add_layer_norm"> {
  let summary = "residual add followed by layer_norm over the last dim";
  let description = [{
    `sum = a + b` (same shapes) and `result = layer_norm(sum) · scale +
    bias` over the last dim. Made by ingot-fuse-add-norm from an add whose
    sum feeds a last-axis `layer_norm`.

    ```mlir
    %sum, %y = ingot.add_layer_norm %h, %o, %g, %b {epsilon = 1.0e-05 : f32}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>)
    ```
  }];
  let arguments = (ins Ingot_Tensor:$lhs, Ingot_Tensor:$rhs,
                   Ingot_Tensor:$scale, Optional<Ingot_Tensor>:$bias,
                   F32Attr:$epsilon);
  let results = (outs Ingot_Tensor:$sum, Ingot_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` $scale (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_RmsNormOp : Ingot_Op<"rms_norm"> {
  let summary = "root-mean-square normalisation over the last dim";
  let description = [{
    `y = x / sqrt(mean(x², -1) + epsilon) · weight` (weight f32/f16/bf16).

    ```mlir
    %y = ingot.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<?x576xf32>, tensor<576xbf16>) -> tensor<?x576xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_WeightTensor:$weight,
                   F32Attr:$epsilon);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_SiluMulOp : Ingot_Op<"silu_mul"> {
  let summary = "silu(gate) times up, the gated MLP's activation";
  let description = [{
    With one operand, its last dim holds gate then up (the output of a
    merged gate/up projection) and the result has half as many features.

    ```mlir
    %h = ingot.silu_mul %gate, %up : (tensor<?x1536xf32>, tensor<?x1536xf32>) -> tensor<?x1536xf32>
    %h2 = ingot.silu_mul %gate_up : (tensor<?x3072xf32>) -> tensor<?x1536xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$gate, Optional<Ingot_Tensor>:$up);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$gate (`,` $up^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Ingot_GeluOp : Ingot_Op<"gelu", [SameOperandsAndResultType]> {
  let summary = "GELU, exact (erf) or with the tanh approximation";
  let description = [{
    `approximate = "tanh"` is GPT-2's gelu_new; `"none"` the erf form.

    ```mlir
    %y = ingot.gelu %x {approximate = "tanh"} : tensor<?x3072xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, StrAttr:$approximate);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Ingot_RopeOp : Ingot_Op<"rope"> {
  let summary = "rotary position embedding of every head of each token";
  let description = [{
    x is [tokens, num_heads * head_dim]; each head's first `rotary_dim`
    features rotate by position · inv_freq in the rotate-half convention
    (pairs i and i + rotary_dim/2). `scaling = "llama3"` rescales inv_freq
    with `factor`, `low_freq_factor`, `high_freq_factor` and
    `original_max_positions` as Llama 3.1 does; `"linear"` divides it by
    `factor` (positions interpolated, as transformers' linear rope_scaling);
    `"none"` leaves it.

    ```mlir
    %q2 = ingot.rope %q, %pos {num_heads = 9 : i64, head_dim = 64 : i64, rotary_dim = 64 : i64,
        theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64, low_freq_factor = 1.0 : f64,
        high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64}
        : (tensor<?x576xf32>, tensor<?xi64>) -> tensor<?x576xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$input, Ingot_I64Tensor:$positions,
                   I64Attr:$num_heads, I64Attr:$head_dim, I64Attr:$rotary_dim,
                   F64Attr:$theta, StrAttr:$scaling, F64Attr:$factor,
                   F64Attr:$low_freq_factor, F64Attr:$high_freq_factor,
                   I64Attr:$original_max_positions);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$input `,` $positions attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

// Not Pure: it writes the KV cache, so it must never be CSEd or dropped.
def Ingot_PagedAttentionOp
    : Op<Ingot_Dialect, "paged_attention", [MemoryEffects<[MemWrite]>]> {
  let summary = "write this step's K/V into the paged cache, then attend";
  let description = [{
    For token t (row of q/k/v) of sequence s: K/V of t are stored at slot
    `slot_mapping[t]` of layer `layer`'s cache; then each query head attends
    causally over positions [max(0, p - window + 1), p] of its sequence, p =
    `positions[t]`, reading the cache through `block_tables[s]`. Tokens of
    sequence s are rows [query_ends[s-1], query_ends[s]). Grouped-query
    heads share KV head h / (num_heads / num_kv_heads). `sliding_window` 0
    means unlimited. q/k/v are columns [offset, offset + heads·head_dim) of
    their operands (offsets 0 unless ingot-fuse-rope-attention absorbed
    column slices of a merged qkv tensor). `softcap` c > 0 soft-caps each
    scaled score s to c·tanh(s / c) before the softmax (Gemma 2); 0 = off.

    ```mlir
    %o = ingot.paged_attention %q, %k, %v, %pos, %slots, %tables, %ends {layer = 0 : i64,
        num_heads = 9 : i64, num_kv_heads = 3 : i64, head_dim = 64 : i64, scale = 0.125 : f64,
        sliding_window = 0 : i64}
        : (tensor<?x576xf32>, tensor<?x192xf32>, tensor<?x192xf32>, tensor<?xi64>, tensor<?xi64>,
           tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x576xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$query, Ingot_Tensor:$key,
                   Ingot_Tensor:$value, Ingot_I64Tensor:$positions,
                   Ingot_I64Tensor:$slot_mapping, Ingot_IntTensor:$block_tables,
                   Ingot_I64Tensor:$query_ends, I64Attr:$layer,
                   I64Attr:$num_heads, I64Attr:$num_kv_heads,
                   I64Attr:$head_dim, F64Attr:$scale, I64Attr:$sliding_window,
                   DefaultValuedAttr<I64Attr, "0">:$q_offset,
                   DefaultValuedAttr<I64Attr, "0">:$k_offset,
                   DefaultValuedAttr<I64Attr, "0">:$v_offset,
                   DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value `,` $positions `,` "
                       "$slot_mapping `,` $block_tables `,` $query_ends "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

// Not Pure, as paged_attention.
def Ingot_RopePagedAttentionOp
    : Op<Ingot_Dialect, "rope_paged_attention", [MemoryEffects<[MemWrite]>]> {
  let summary = "paged_attention that applies RoPE to q and k itself";
  let description = [{
    `paged_attention(rope(q), rope(k), v)` in one kernel: k is rotated as it
    is written into the paged cache and q as it is read, so neither rotated
    tensor goes through memory. Query/key/value are columns
    [offset, offset + heads·head_dim) of their operands, which may be one
    merged qkv tensor. The rope attributes are those of `ingot.rope`. Made
    by ingot-fuse-rope-attention.

    ```mlir
    %o = ingot.rope_paged_attention %qkv, %qkv, %qkv, %pos, %slots, %tables, %ends {layer = 0 : i64,
        num_heads = 9 : i64, num_kv_heads = 3 : i64, head_dim = 64 : i64, scale = 0.125 : f64,
        sliding_window = 0 : i64, q_offset = 0 : i64, k_offset = 576 : i64, v_offset = 768 : i64,
        rotary_dim = 64 : i64, theta = 1.0e+04 : f64, scaling = "none", factor = 1.0 : f64,
        low_freq_factor = 1.0 : f64, high_freq_factor = 1.0 : f64, original_max_positions = 0 : i64}
        : (tensor<?x960xf32>, tensor<?x960xf32>, tensor<?x960xf32>, tensor<?xi64>, tensor<?xi64>,
           tensor<?x?xi32>, tensor<?xi64>) -> tensor<?x576xf32>
    ```
  }];
  let arguments = (ins Ingot_Tensor:$query, Ingot_Tensor:$key,
                   Ingot_Tensor:$value, Ingot_I64Tensor:$positions,
                   Ingot_I64Tensor:$slot_mapping, Ingot_IntTensor:$block_tables,
                   Ingot_I64Tensor:$query_ends, I64Attr:$layer,
                   I64Attr:$num_heads, I64Attr:$num_kv_heads,
                   I64Attr:$head_dim, F64Attr:$scale, I64Attr:$sliding_window,
                   I64Attr:$q_offset, I64Attr:$k_offset, I64Attr:$v_offset,
                   I64Attr:$rotary_dim, F64Attr:$theta, StrAttr:$scaling,
                   F64Attr:$factor, F64Attr:$low_freq_factor,
                   F64Attr:$high_freq_factor, I64Attr:$original_max_positions,
                   DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs Ingot_Tensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value `,` $positions `,` "
                       "$slot_mapping `,` $block_tables `,` $query_ends "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}
