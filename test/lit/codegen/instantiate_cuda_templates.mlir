// RUN: ingot-opt %s --split-input-file --ingot-instantiate-cuda-templates | FileCheck %s
// RUN: ingot-opt %s --split-input-file --ingot-instantiate-cuda-templates="kv-layout=block,head,token,dim kv-block-size=8" | FileCheck %s --check-prefix=HEADMAJOR
// RUN: ingot-opt %s --split-input-file --ingot-instantiate-cuda-templates="explain=true" 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: not ingot-opt %s --split-input-file --ingot-instantiate-cuda-templates="kv-layout=token,block" 2>&1 | FileCheck %s --check-prefix=BADLAYOUT

// --ingot-instantiate-cuda-templates on hand-written plan IR. Launches are
// lists of dictionaries; `args` are (kind, operand, axis) triples (1
// pointer, 2 numel, 3 dim, 5/6 the K/V cache of layer `axis`) and `grid`
// (operand, divisor, extent) triples, operand -1 for a constant extent.

// rms_norm with a bf16 weight: one block per row of 64 values, the weight's
// dtype and the epsilon baked into the instance.
// CHECK-LABEL: func.func @norm
// CHECK:         plan.kernel "rms_norm"
// CHECK-SAME:      ingot.cuda_kernel = [{args = array<i64: 1, 0, 0, 1, 1, 0, 1, 2, 0>, block = 64 : i64, grid = array<i64: 0, 64, 1>, grid_operand = 0 : i64, symbol = @ingot_cuda::@ingot_s0_rms_norm}]
// CHECK-SAME:      ingot.cuda_source = "extern \22C\22 __global__ void __launch_bounds__(64) ingot_s0_rms_norm(const float *p0, const ingot_k::Bf16 *p1, float *p2) {\0A  ingot_k::rmsNorm<64, 64, ingot_k::Bf16>(p0, nullptr, p1, nullptr, p2, 0x1.4f8b58p-17f);\0A}\0A"
// The linear after it: bias absent (nullptr), an f32 residual, the packed
// nk16 weight; 4 warps per block over 96 columns (24 blocks along x) and
// 4 rows per warp along y (numel(x) / (64 * 4) blocks).
// CHECK:         plan.kernel "linear"
// CHECK-SAME:      ingot.cuda_kernel = [{args = array<i64: 1, 0, 0, 1, 1, 0, 1, 3, 0, 1, 4, 0, 2, 0, 0>, block = 128 : i64, grid = array<i64: -1, 1, 24, 0, 256, 1>
// CHECK-SAME:      ingot_k::linear<64, 96, float, ingot_k::WLayout::Nk16, 4, 4, 2>(p0, p1, nullptr, p3, p4, numel / 64LL)
func.func @norm(%x: memref<?x64xf32> {plan.dims = ["tokens", ""], plan.name = "x"},
                %r: memref<?x96xf32> {plan.dims = ["tokens", ""], plan.name = "r"}) -> memref<?x96xf32> {
  %w = plan.param "norm.weight" : memref<64xbf16>
  %y = plan.alloc {max_shape = array<i64: 8, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "rms_norm" ins(%x, %w : memref<?x64xf32>, memref<64xbf16>) outs(%y : memref<?x64xf32>)
      {args = {epsilon = 1.0e-05 : f64}, origin = "norm"}
  %lw = plan.param "up.weight" : memref<96x64xf32>
  %none = plan.none
  %z = plan.alloc {max_shape = array<i64: 8, 96>, offset = 2048 : i64} : memref<?x96xf32>
  plan.kernel "linear" ins(%y, %lw, %none, %r : memref<?x64xf32>, memref<96x64xf32>, none, memref<?x96xf32>) outs(%z : memref<?x96xf32>)
      {args = {activation = "silu", w_layout = "nk16"}, origin = "up"}
  return %z : memref<?x96xf32>
}

// -----

// rope_paged_attention over a merged qkv buffer (q 64 wide at 0, k and v
// 32 wide at 64 and 96), GQA 4/2 heads of 16: two launches. The first writes
// the cache (one block per token: grid from numel(positions)), the second
// attends (grid x = 4 heads, y = tokens) and takes the block-table width.
// Both get layer 3's K and V caches; the geometry is the default
// block,token,head,dim layout with 16-token blocks.
// CHECK-LABEL: func.func @attention
// CHECK:         plan.kernel "rope_paged_attention"
// CHECK-SAME:      ingot.cuda_kernel = [{args = array<i64: 1, 1, 0, 1, 2, 0, 1, 3, 0, 1, 4, 0, 5, 0, 3, 6, 0, 3, 2, 3, 0>, block = 128 : i64, grid = array<i64: 3, 1, 1>, grid_operand = 0 : i64, symbol = @ingot_cuda::@ingot_s0_rope_paged_attention_kv}, {args = array<i64: 1, 0, 0, 1, 3, 0, 1, 5, 0, 1, 6, 0, 5, 0, 3, 6, 0, 3, 1, 7, 0, 2, 3, 0, 2, 6, 0, 3, 5, 1>, block = 128 : i64, grid = array<i64: -1, 1, 4, 3, 1, 1>, grid_operand = 0 : i64, symbol = @ingot_cuda::@ingot_s0_rope_paged_attention}]
// CHECK-SAME:      a.blockFloats = 512;
// CHECK-SAME:      a.headStride = 16;\0A  a.rowStride = 32;
// CHECK-SAME:      a.qStride = 128;
// CHECK-SAME:      a.kOffset = 64;
// CHECK-SAME:      ingot_k::pagedKvWrite<2, 16, 16, ingot_k::i64>(p1, p2, p3, p4, keys, values, a, ingot_k::RopeParams{2, 0x1.388p+13, 0x1p+3, 0x1p+0, 0x1p+2, 0x1p+13}, tokens)
// CHECK-SAME:      ingot_k::pagedAttention<4, 2, 16, 16, 4, ingot_k::i64, ingot_k::i32>(p0, p3, p5, p6, keys, values, p7, a,
// HEADMAJOR-LABEL: func.func @attention
// HEADMAJOR:       a.blockFloats = 256;
// HEADMAJOR-SAME:  a.headStride = 128;\0A  a.rowStride = 16;
func.func @attention(%qkv: memref<?x128xf32> {plan.dims = ["tokens", ""], plan.name = "qkv"},
                     %pos: memref<?xi64> {plan.dims = ["tokens"], plan.name = "positions"},
                     %slots: memref<?xi64> {plan.dims = ["tokens"], plan.name = "slot_mapping"},
                     %tables: memref<?x?xi32> {plan.dims = ["seqs", "blocks"], plan.name = "block_tables"},
                     %ends: memref<?xi64> {plan.dims = ["seqs"], plan.name = "query_ends"}) -> memref<?x64xf32> {
  %o = plan.alloc {max_shape = array<i64: 8, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "rope_paged_attention" ins(%qkv, %qkv, %qkv, %pos, %slots, %tables, %ends : memref<?x128xf32>, memref<?x128xf32>, memref<?x128xf32>, memref<?xi64>, memref<?xi64>, memref<?x?xi32>, memref<?xi64>) outs(%o : memref<?x64xf32>)
      {args = {layer = 3 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f64,
               sliding_window = 0 : i64, softcap = 0.0 : f64, q_offset = 0 : i64, k_offset = 64 : i64, v_offset = 96 : i64,
               rotary_dim = 16 : i64, theta = 1.0e+04 : f64, scaling = "llama3", factor = 8.0 : f64, low_freq_factor = 1.0 : f64,
               high_freq_factor = 4.0 : f64, original_max_positions = 8192 : i64}, origin = "attn"}
  return %o : memref<?x64xf32>
}

// -----

// The next layer's norm has the same shape, weight dtype and epsilon: it
// launches the first norm's kernel and adds no source; a norm with another
// epsilon gets a kernel of its own.
// CHECK-LABEL: func.func @layers
// CHECK:         plan.kernel "rms_norm"
// CHECK-SAME:      symbol = @ingot_cuda::@ingot_s0_rms_norm}]
// CHECK-SAME:      ingot.cuda_source
// CHECK:         plan.kernel "rms_norm"
// CHECK-SAME:      symbol = @ingot_cuda::@ingot_s0_rms_norm}]
// CHECK-NOT:       ingot.cuda_source
// CHECK-SAME:      origin = "norm1"
// CHECK:         plan.kernel "rms_norm"
// CHECK-SAME:      symbol = @ingot_cuda::@ingot_s2_rms_norm}]
// CHECK-SAME:      ingot.cuda_source
func.func @layers(%x: memref<?x64xf32> {plan.dims = ["tokens", ""], plan.name = "x"}) -> memref<?x64xf32> {
  %w0 = plan.param "norm0.weight" : memref<64xf32>
  %w1 = plan.param "norm1.weight" : memref<64xf32>
  %y0 = plan.alloc {max_shape = array<i64: 8, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "rms_norm" ins(%x, %w0 : memref<?x64xf32>, memref<64xf32>) outs(%y0 : memref<?x64xf32>)
      {args = {epsilon = 1.0e-05 : f64}, origin = "norm0"}
  %y1 = plan.alloc {max_shape = array<i64: 8, 64>, offset = 2048 : i64} : memref<?x64xf32>
  plan.kernel "rms_norm" ins(%y0, %w1 : memref<?x64xf32>, memref<64xf32>) outs(%y1 : memref<?x64xf32>)
      {args = {epsilon = 1.0e-05 : f64}, origin = "norm1"}
  %y2 = plan.alloc {max_shape = array<i64: 8, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "rms_norm" ins(%y1, %w1 : memref<?x64xf32>, memref<64xf32>) outs(%y2 : memref<?x64xf32>)
      {args = {epsilon = 1.0e-06 : f64}, origin = "norm2"}
  return %y2 : memref<?x64xf32>
}

// -----

// Quantised weights keep their logical f32 memref type; the param's quant
// and group pick the decoder: a q4 linear (group 32) and q4m embedding rows
// read their blocks as bytes.
// CHECK-LABEL: func.func @quantised
// CHECK:         plan.kernel "linear"
// CHECK-SAME:      ingot_s0_linear(const float *p0, const ingot_k::u8 *p1, float *p2, ingot_k::i64 numel)
// CHECK-SAME:      ingot_k::linearQuant<64, 64, ingot_k::QFormat::Q4, 32, 4, 4, 0, float>(p0, p1, nullptr, nullptr, p2, numel / 64LL)
// CHECK:         plan.kernel "gather"
// CHECK-SAME:      ingot_k::embeddingRowsQuant<64, 64, ingot_k::QFormat::Q4M, 32, ingot_k::i64>(p0, p1, p2, 100LL)
func.func @quantised(%x: memref<?x64xf32> {plan.dims = ["tokens", ""], plan.name = "x"},
                     %ids: memref<?xi64> {plan.dims = ["tokens"], plan.name = "ids"}) -> memref<?x64xf32> {
  %q = plan.param "w@q4g32" {group = 32 : i64, quant = "q4"} : memref<64x64xf32>
  %l = plan.alloc {max_shape = array<i64: 8, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "linear" ins(%x, %q : memref<?x64xf32>, memref<64x64xf32>) outs(%l : memref<?x64xf32>)
      {args = {activation = "none", w_layout = "nk"}, origin = "q4_linear"}
  %qt = plan.param "emb@q4mg32" {group = 32 : i64, quant = "q4m"} : memref<100x64xf32>
  %e = plan.alloc {max_shape = array<i64: 8, 64>, offset = 4096 : i64} : memref<?x64xf32>
  plan.kernel "gather" ins(%qt, %ids : memref<100x64xf32>, memref<?xi64>) outs(%e : memref<?x64xf32>)
      {args = {axis = 0 : i64}, origin = "q4m_embedding"}
  return %e : memref<?x64xf32>
}

// -----

// Must not fire: a gather along axis 1, a linear on fp8 weights (no
// template decodes e4m3 yet: a float template on those bytes would be a
// silent wrong answer), and a step the elementwise generator already
// covered.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     ingot.cuda_source
// CHECK:         return
// EXPLAIN:       remark: no CUDA kernel: the gather template takes rows of a 2-D f32, f16 or bf16 table along axis 0
// EXPLAIN:       remark: no CUDA kernel: the quantised linear template takes f32 activations and q8/q4/q4m [N, K] weights
// BADLAYOUT:     error: kv-layout must be block,token,head,dim or block,head,token,dim, got 'token,block'
func.func @untouched(%x: memref<?x64xf32> {plan.dims = ["tokens", ""], plan.name = "x"},
                     %ids: memref<?xi64> {plan.dims = ["tokens"], plan.name = "ids"}) -> memref<?x64xf32> {
  %t = plan.param "table" : memref<64x100xf32>
  %g = plan.alloc {max_shape = array<i64: 64, 8>, offset = 0 : i64} : memref<64x?xf32>
  plan.kernel "gather" ins(%t, %ids : memref<64x100xf32>, memref<?xi64>) outs(%g : memref<64x?xf32>)
      {args = {axis = 1 : i64}, origin = "g"}
  %q = plan.param "w@f8g64" {group = 64 : i64, quant = "f8"} : memref<64x64xf32>
  %l = plan.alloc {max_shape = array<i64: 8, 64>, offset = 8192 : i64} : memref<?x64xf32>
  plan.kernel "linear" ins(%x, %q : memref<?x64xf32>, memref<64x64xf32>) outs(%l : memref<?x64xf32>)
      {args = {activation = "none", w_layout = "nk"}, origin = "f8_linear"}
  %y = plan.alloc {max_shape = array<i64: 8, 64>, offset = 4096 : i64} : memref<?x64xf32>
  plan.kernel "add" ins(%x, %x : memref<?x64xf32>, memref<?x64xf32>) outs(%y : memref<?x64xf32>)
      {args = {}, origin = "add", ingot.cuda_kernel = {args = array<i64>, block = 256 : i64, grid_operand = 2 : i64, symbol = @ingot_cuda::@ingot_s1_add}}
  return %y : memref<?x64xf32>
}
