//===- FusionPasses.td - fusion, layout, quantisation ---*- tablegen -*-===//
//
// The passes of phases `fused`, `quantized` and `laid-out`, apart from
// Passes.td for size; Passes.td includes this file, so one
// `-gen-pass-decls` run declares every pass.
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_FUSION_PASSES
#define INGOT_FUSION_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Fusion (phase `fused`) and weight layout (phase `laid-out`)
//===----------------------------------------------------------------------===//

def RaiseGelu : Pass<"ingot-raise-gelu", "mlir::func::FuncOp"> {
  let summary = "Replace GELU written out as elementwise ops with one gelu";
  let description = [{
    The erf form 0.5 · x · (1 + erf(x / √2)) and the tanh form
    0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))) as PyTorch and
    jax2tf export them (factors in any order, x / √2 as a div or a mul by
    1/√2, x³ as pow or products; constants to 1e-6 relative) become
    `ingot.gelu` with `approximate` "none" or "tanh", when the f32 ops
    below the final multiply are read only inside the pattern. The linear
    epilogue then absorbs it (ingot-fuse-linear-epilogue) and a fused
    elementwise kernel takes it as one opcode. The result is the gelu
    kernel's, within a few ulp of the chain's.

    Before:
    ```mlir
    %d = ingot.div %x, %sqrt2 : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
    %e = ingot.erf %d : tensor<?x64xf32>
    %a = ingot.add %e, %one : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
    %m = ingot.mul %x, %a : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %y = ingot.mul %m, %half : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
    ```
    After:
    ```mlir
    %y = ingot.gelu %x {approximate = "none"} : tensor<?x64xf32>
    ```
  }];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def RaiseLayerNorm : Pass<"ingot-raise-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Replace a last-axis layer norm written out as ops with one layer_norm";
  let description = [{
    Exports below opset 17 write LayerNormalization as reduce_mean, sub,
    pow (or d · d), reduce_mean, add eps, sqrt, div, mul by gamma and
    maybe add beta. With both means over the last axis (kept), eps a scalar
    constant, gamma and beta [C] for the static last dim C, and every op
    below the division read only inside the pattern (x may have other
    readers), the chain becomes `ingot.layer_norm` over axis -1. The
    residual add before it then fuses (ingot-fuse-add-norm). The result is
    the layer_norm kernel's, within a few ulp of the chain's.

    Before:
    ```mlir
    %m = ingot.reduce_mean %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x64xf32> -> tensor<?x1xf32>
    %d = ingot.sub %x, %m : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
    %p = ingot.pow %d, %two : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
    %v = ingot.reduce_mean %p {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x64xf32> -> tensor<?x1xf32>
    %a = ingot.add %v, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
    %s = ingot.sqrt %a : tensor<?x1xf32>
    %n = ingot.div %d, %s : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
    %g = ingot.mul %n, %gamma : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %y = ingot.add %g, %beta : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
    After:
    ```mlir
    %y = ingot.layer_norm %x, %gamma, %beta {axis = -1 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FuseAddNorm : Pass<"ingot-fuse-add-norm", "mlir::func::FuncOp"> {
  let summary = "Fuse a residual add with the rms_norm/layer_norm of its sum";
  let description = [{
    An `add` of two same-shaped tensors whose sum feeds an `rms_norm` (or a
    last-axis `layer_norm`) becomes one `add_rms_norm` (`add_layer_norm`)
    that returns both the sum and the normalised value, so the residual
    stream is read once and written once. Broadcasting adds, and norms over
    other axes, are left alone. When several norms read one sum, the first
    absorbs the add and the others read its sum result.

    Before:
    ```mlir
    %h = ingot.add %x, %o : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %y = ingot.rms_norm %h, %w {epsilon = 1.0e-05 : f32} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
    After:
    ```mlir
    %h, %y = ingot.add_rms_norm %x, %o, %w {epsilon = 1.0e-05 : f32}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>)
    ```
  }];
  let options = [
    Option<"layerNorm", "layer-norm", "bool", /*default=*/"true",
           "Also fuse adds into last-axis layer_norm">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def MergeLinears : Pass<"ingot-merge-linears", "mlir::func::FuncOp"> {
  let summary = "Merge linears that share an input into one GEMM";
  let description = [{
    Linears reading the same input with the same layout, weight dtype and
    activation, each a plain `ingot.param`, and either all with or all
    without a bias, become one linear over the concatenated weights (an
    `ingot.param` with `parts`; the artifact writer concatenates) followed
    by column slices. A `silu_mul` of the two halves of such a merge
    becomes the one-operand `silu_mul`, so the gated MLP reads one buffer.
    Q/K/V (3 users) and gate/up (2) are the decoder's cases.

    Before:
    ```mlir
    %g = ingot.linear %x, %wg {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %u = ingot.linear %x, %wu {w_layout = "nk"} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %h = ingot.silu_mul %g, %u : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    ```
    After:
    ```mlir
    %w = ingot.param "g+u" {parts = ["g", "u"]} : tensor<256x64xf32>
    %gu = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
    %h = ingot.silu_mul %gu : (tensor<?x256xf32>) -> tensor<?x128xf32>
    ```
  }];
  let options = [
    Option<"maxMerged", "max-merged", "int64_t", /*default=*/"8",
           "Most linears merged into one">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FuseRopeAttention : Pass<"ingot-fuse-rope-attention", "mlir::func::FuncOp"> {
  let summary = "Fold RoPE and column slices into paged attention";
  let description = [{
    `paged_attention` operands that are last-axis column slices (step 1,
    constant bounds) read the sliced tensor at an offset instead; when q
    and k are both `rope` of the attention's positions with one set of
    rope attributes, the op becomes `rope_paged_attention`, which rotates
    k as it writes the cache and q as it reads it.

    Before:
    ```mlir
    %q = ingot.rope %q0, %pos {...} : (tensor<?x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
    %k = ingot.rope %k0, %pos {...} : (tensor<?x32xf32>, tensor<?xi64>) -> tensor<?x32xf32>
    %o = ingot.paged_attention %q, %k, %v, %pos, %slots, %tables, %ends {...}
    ```
    After:
    ```mlir
    %o = ingot.rope_paged_attention %q0, %k0, %v, %pos, %slots, %tables, %ends {..., rotary_dim = 16 : i64, ...}
    ```
  }];
  let options = [
    Option<"fuseRope", "rope", "bool", /*default=*/"true",
           "Fold rope into the attention (else only absorb slices)">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FuseLinearEpilogue : Pass<"ingot-fuse-linear-epilogue", "mlir::func::FuncOp"> {
  let summary = "Fuse activations and residual adds into the producing linear";
  let description = [{
    A `relu`/`gelu`/`silu`-like activation whose only operand is a linear
    used once becomes the linear's `activation`; an `add` of a linear used
    once (and without a residual yet) and a same-shaped tensor becomes the
    linear's `residual`. The epilogue runs on each output tile while it is
    in cache instead of another pass over memory. (GELU written out op by
    op becomes a `gelu` first, in ingot-raise-gelu.)

    Before:
    ```mlir
    %y = ingot.linear %x, %w, %b {w_layout = "kn"} : (...) -> tensor<?x256xf32>
    %a = ingot.gelu %y {approximate = "tanh"} : tensor<?x256xf32>
    ```
    After:
    ```mlir
    %a = ingot.linear %x, %w, %b {activation = "gelu_tanh", w_layout = "kn"} : (...) -> tensor<?x256xf32>
    ```
  }];
  let options = [
    Option<"residual", "residual", "bool", /*default=*/"true",
           "Fuse residual adds">,
    Option<"activation", "activation", "bool", /*default=*/"true",
           "Fuse activations">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FuseAttention : Pass<"ingot-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Fuse an encoder's per-head attention chain into one op";
  let description = [{
    matmul(softmax(q'·k'ᵀ · scale + mask), v'), where q' and v' are
    transposes [0, 2, 1, 3] and k'ᵀ a transpose [0, 2, 3, 1] of
    [B, S, H, D] tensors (what BERT-style exports write after reshaping a
    projection into heads), becomes `ingot.attention` on the untransposed
    tensors. The scale is a div or mul by a scalar constant (or absent);
    the mask is an f32 add of rank <= 4 (or absent). The transpose back
    to [B, S, H, Dv], when it is the result's only reader, is absorbed;
    otherwise a transpose restores the per-head layout. Scores and
    probabilities are only read once (softmax's) and never leave the
    kernel.

    Before:
    ```mlir
    %qt = ingot.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
    %kt = ingot.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<?x?x4x16xf32> -> tensor<?x4x16x?xf32>
    %vt = ingot.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
    %s = ingot.matmul %qt, %kt : (...) -> tensor<?x4x?x?xf32>
    %d = ingot.div %s, %c4 : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
    %a = ingot.add %d, %mask : (tensor<?x4x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x?x?xf32>
    %p = ingot.softmax %a {axis = 3 : i64} : tensor<?x4x?x?xf32>
    %o = ingot.matmul %p, %vt : (...) -> tensor<?x4x?x16xf32>
    %y = ingot.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
    ```
    After:
    ```mlir
    %y = ingot.attention %q, %k, %v, %mask {scale = 2.500000e-01 : f64}
        : (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>,
           tensor<?x1x1x?xf32>) -> tensor<?x?x4x16xf32>
    ```
  }];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def PackWeights : Pass<"ingot-pack-weights", "mlir::func::FuncOp"> {
  let summary = "Pack linear weights into the layout the CPU kernel streams";
  let description = [{
    Each "nk" linear whose weight is an `ingot.param` read only by "nk"
    linears, of an element type in `element-types` (default bf16, f16:
    the types measured faster packed; f32 is not), gets a packed param
    (`layout = "nk16"`, see format/include/ingot/WeightLayout.h) and
    `w_layout = "nk16"`; the artifact writer packs the bytes, the loader
    maps them as they are. Params also read by other ops (a tied
    embedding's gather) stay row-major rather than being stored twice.

    Measured on an AVX-512 CPU (bench-linear-decode, one thread): packed
    bf16 GEMV streams 1.2-1.4x faster at one row, but end to end SmolLM2
    bf16 decodes at the same rate and prefills 17% slower (the kernel
    unpacks panels for many rows), so `ingot compile` runs this pass only
    with `--pack-weights=on`.

    With `layout=q16` it packs q8/q4/q4m params in groups of 32, or q8
    ones per output channel (one group a row), with rows a multiple of 16
    and columns of 32, instead, for the int8-activation kernels; a gather on axis 0 may also read them (a tied embedding moves
    with its lm_head). `ingot compile --act-quant int8` (auto's choice for
    an LLM on the CPU) runs it after ingot-quantize-weights.

    Before:
    ```mlir
    %w = ingot.param "q.weight" : tensor<64x64xbf16>
    %y = ingot.linear %x, %w {w_layout = "nk"} : (...) -> tensor<?x64xf32>
    ```
    After:
    ```mlir
    %w = ingot.param "q.weight@nk16" {layout = "nk16", parts = ["q.weight"]} : tensor<64x64xbf16>
    %y = ingot.linear %x, %w {w_layout = "nk16"} : (...) -> tensor<?x64xf32>
    ```
  }];
  let options = [
    Option<"layout", "layout", "std::string", /*default=*/"\"nk16\"",
           "Packed layout to use: nk16 (16-bit weights) or q16 (q8/q4/q4m "
           "weights, int8 activations)">,
    ListOption<"elementTypes", "element-types", "std::string",
               "Weight element types to pack (default bf16,f16: the ones "
               "measured faster packed)">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"16",
           "Leave weights with fewer rows row-major">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def QuantizeWeights : Pass<"ingot-quantize-weights", "mlir::func::FuncOp"> {
  let summary = "Store linear weights in a quantised block format";
  let description = [{
    Each "nk" linear whose weight is a row-major 2-D f32/f16/bf16
    `ingot.param` gets a param with `#ingot.quant<format, group = G>`: the
    artifact writer quantises the bytes one tensor at a time while
    streaming them, and the linear kernel computes on the blocks. `mode`
    int8 gives q8 (symmetric), int4 gives q4m (scale and minimum) or, with
    `scheme=sym`, q4 (symmetric), fp8 gives f8e4m3. int4 defaults to asym
    because on SmolLM2-135M (GPL-3 text, context 512) q4 g32 raised the
    perplexity by 38% over f32 and q4m g32 by 5%. The group
    runs along K; `group-size` 0 means one group per row (per output
    channel), and a K that is not a multiple of the group ends each row
    with a shorter group.

    A param that other ops also read (a tied embedding's gather) keeps its
    original for them: norms are never quantised, embeddings only when
    `embed` asks (none by default, as the peers' defaults), while the tied
    lm_head gets a quantised copy of its own. With `embed` = same or int8
    the table an axis-0 `ingot.gather` reads is quantised too (same: the
    linears' format and group; int8: q8), and a tied table whose gather and
    lm_head ask for the same format is stored once, as a GGUF file stores
    it: on SmolLM2-135M `mode=int8 embed=same` drops the 113 MB f32 table
    and the 28 MB q8 lm_head copy for one 30 MB q8 table. `exclude` takes glob
    patterns matched against the param's name, the names of its source
    tensors and the linear's node name (e.g. `lm_head`, `*embed*`); a match
    keeps the weight as it is. Weights in "kn" layout (ONNX MatMul) and
    packed weights are left alone.

    The linear named `lm_head` follows `lm-head`: with int4 it defaults to
    int8 (q8), as llama.cpp's 4-bit files keep their output matrix at higher
    precision. On SmolLM2-135M a q4m lm_head alone raised the perplexity by
    4.6%; with it at q8 the int4 model is within 0.1% of f32.

    `mode=stored` keeps the formats a pre-quantised checkpoint chose: the
    function attribute `ingot.stored_formats` (set by the GGUF importer)
    maps source tensor names to `#ingot.quant`; each linear weight, and
    each embedding table an axis-0 `ingot.gather` reads, whose source
    tensors all map to one format gets it (`exclude` still applies). The
    artifact writer then copies the stored blocks instead of requantising.

    Before:
    ```mlir
    %w = ingot.param "q.weight" : tensor<64x576xf32>
    %y = ingot.linear %x, %w {w_layout = "nk"} : (...) -> tensor<?x64xf32>
    ```
    After (`mode=int4`):
    ```mlir
    %w = ingot.param "q.weight@q4mg32" {parts = ["q.weight"], quant = #ingot.quant<"q4m", group = 32>} : tensor<64x576xf32>
    %y = ingot.linear %x, %w {w_layout = "nk"} : (...) -> tensor<?x64xf32>
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"none\"",
           "none, int8, int4, fp8, or stored (the formats in the "
           "function's ingot.stored_formats)">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"-1",
           "Values per scale along K; 0 = per output channel; -1 = the "
           "mode's default (int8 and int4: 32, fp8: per channel)">,
    Option<"scheme", "scheme", "std::string", /*default=*/"\"\"",
           "sym or asym (int4 only: a minimum per group); empty = the "
           "mode's default (int4: asym, int8 and fp8: sym)">,
    ListOption<"exclude", "exclude", "std::string",
               "Glob patterns of weights to leave unquantised">,
    Option<"lmHead", "lm-head", "std::string", /*default=*/"\"\"",
           "The lm_head's format: same (as the others), int8, or none; "
           "empty = the mode's default (int4: int8, else same)">,
    Option<"embed", "embed", "std::string", /*default=*/"\"none\"",
           "Embedding tables (axis-0 gathers): none (kept as they are), "
           "same (the linears' format and group) or int8 (q8)">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

def FuseElementwise : Pass<"ingot-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise ops into one kernel";
  let description = [{
    Grows maximal connected groups of f32 elementwise ops (add, sub, mul,
    div, pow, sqrt, neg, exp, erf, tanh, sigmoid, relu, gelu, the float
    kinds of `unary_math`, `binary_math` max/min) whose intermediate results have no
    users outside the group and the shape of the group's result (so no
    intermediate is recomputed per broadcast element). A group of two or
    more becomes one `ingot.fused_elementwise`: one read of the inputs, one
    write of the result. One-element float constants become program
    constants instead of inputs. A `reduce_mean` (or `reduce` sum/max) over
    the last axis that is the only user of a group's result (even of a
    single op) joins it as the fused op's trailing reduction. See the op's
    description for the encoding. A `gelu` (what ingot-raise-gelu makes
    of an exporter's 5 to 14 ops) is one opcode.

    Before:
    ```mlir
    %0 = ingot.mul %x, %s : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %1 = ingot.add %0, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %2 = ingot.relu %1 : tensor<?x64xf32>
    ```
    After:
    ```mlir
    %2 = ingot.fused_elementwise %x, %s, %b {ops = "mul add relu",
        args = array<i64: 0, 1, 3, 2, 4, -1>, constants = array<f64>}
        : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"32",
           "Most ops fused into one kernel">,
    Option<"maxInputs", "max-inputs", "int64_t", /*default=*/"8",
           "Most tensor inputs of one fused kernel">,
    Option<"reductions", "reductions", "bool", /*default=*/"true",
           "Take over a reduction over the last axis of a group's result">,
  ];
  let dependentDialects = ["ingot::graph::IngotDialect"];
}

#endif // INGOT_FUSION_PASSES
