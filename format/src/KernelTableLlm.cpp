//===- KernelTableLlm.cpp - Signatures of the LLM and linear-algebra kernels
//-===//
//
// Entries of the kernel table (KernelTable.h), one function per family of
// runtime kernels. A signature says what the kernel accepts, so changing
// one changes what the validator lets through: keep it equal to the
// kernel's own checks (KernelTableTest checks every CPU kernel against it).
//
//===----------------------------------------------------------------------===//
#include "KernelTableFamilies.h"

namespace ingot::kernel_table {

using namespace sig;
using namespace sig::dtypes;

/// FusedElementwise (runtime/src/cpu/FusedElementwise.cpp).
void addFusedElementwiseSpecs(std::vector<KernelSpec> &table) {
  // Inputs f32, or int32 read by the program's from_i32 alone.
  table.push_back({"fused_elementwise",
                   true,
                   {{in("x", DTypeSet{DType::F32, DType::I32})},
                    {in("y", kF32)},
                    {"ops", "args", "constants", "reduce", "keepdims"},
                    /*variadic=*/true}});
}

/// Linear (runtime/src/cpu/Linear.cpp).
void addLinearSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"linear",
                   false,
                   {{in("x", kF32), in("weight", kFloatWeight | kQuant),
                     opt("bias", kFloatWeight), opt("residual", kF32)},
                    {in("y", kF32)},
                    {"activation", "w_layout"}}});
}

/// LlmActivation (runtime/src/cpu/LlmActivation.cpp).
void addLlmActivationSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"silu_mul",
                   true,
                   {{in("gate", kF32), opt("up", kF32)}, {in("y", kF32)}, {}}});
  table.push_back(
      {"gelu", true, {{in("x", kF32)}, {in("y", kF32)}, {"approximate"}}});
}

/// LlmNorm (runtime/src/cpu/LlmNorm.cpp).
void addLlmNormSpecs(std::vector<KernelSpec> &table) {
  table.push_back({"rms_norm",
                   false,
                   {{in("x", kF32), in("weight", kFloatWeight)},
                    {in("y", kF32)},
                    {"epsilon"}}});
  // In place: sum may take a's memory and y b's (LlmNorm.cpp in the runtime
  // says how).
  table.push_back({"add_rms_norm",
                   true,
                   {{in("a", kF32), in("b", kF32), in("weight", kFloatWeight)},
                    {in("sum", kF32), in("y", kF32)},
                    {"epsilon"}}});
}

/// MatMul (runtime/src/cpu/MatMul.cpp).
void addMatMulSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"matmul", false, {{in("a", kF32), in("b", kF32)}, {in("y", kF32)}, {}}});
  const DTypeSet q8{DType::U8, DType::I8};
  table.push_back(
      {"matmul_integer",
       false,
       {{in("a", q8), in("b", q8), opt("a_zero_point", q8),
         opt("b_zero_point", q8), opt("scale", kF32), opt("bias", kF32)},
        {in("y", DTypeSet{DType::I32, DType::F32})},
        {"activation"}}});
  table.push_back({"dynamic_quantize_linear",
                   false,
                   {{in("x", kF32)},
                    {in("y", DTypeSet{DType::U8}), in("scale", kF32),
                     in("zero_point", DTypeSet{DType::U8})},
                    {}}});
  table.push_back({"gemm",
                   false,
                   {{in("a", kF32), in("b", kF32), opt("c", kF32)},
                    {in("y", kF32)},
                    {"alpha", "beta", "transA", "transB"}}});
}

/// Normalization (runtime/src/cpu/Normalization.cpp).
void addNormalizationSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"softmax", true, {{in("x", kF32)}, {in("y", kF32)}, {"axis"}}});
  table.push_back(
      {"layer_norm",
       false,
       {{in("x", kF32), in("scale", kF32), opt("bias", kF32)},
        {in("y", kF32), opt("mean", kF32), opt("inv_std_dev", kF32)},
        {"axis", "epsilon"}}});
  // In place: sum may take a's memory and y b's (Normalization.cpp in the
  // runtime says how).
  table.push_back(
      {"add_layer_norm",
       true,
       {{in("a", kF32), in("b", kF32), in("scale", kF32), opt("bias", kF32)},
        {in("sum", kF32), in("y", kF32)},
        {"epsilon"}}});
}

/// PagedAttention (runtime/src/cpu/PagedAttention.cpp).
void addPagedAttentionSpecs(std::vector<KernelSpec> &table) {
  KernelSignature sig{{in("q", kF32), in("k", kF32), in("v", kF32),
                       in("positions", kIndex), in("slot_mapping", kIndex),
                       in("block_tables", kIndex), in("query_ends", kIndex)},
                      {in("out", kF32)},
                      {"layer", "num_heads", "num_kv_heads", "head_dim",
                       "scale", "sliding_window", "softcap", "q_offset",
                       "k_offset", "v_offset"}};
  table.push_back({"paged_attention", false, sig});
  for (std::string_view a :
       {"rotary_dim", "theta", "scaling", "factor", "low_freq_factor",
        "high_freq_factor", "original_max_positions"})
    sig.attrs.push_back(a);
  table.push_back({"rope_paged_attention", false, sig});
}

/// DenseAttention (runtime/src/cpu/DenseAttention.cpp): encoders' per-head
/// attention on [B, S, H, D] tensors with an optional additive mask.
void addDenseAttentionSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"attention",
       false,
       {{in("q", kF32), in("k", kF32), in("v", kF32), opt("mask", kF32)},
        {in("y", kF32)},
        {"scale"}}});
}

/// Rope (runtime/src/cpu/Rope.cpp).
void addRopeSpecs(std::vector<KernelSpec> &table) {
  table.push_back(
      {"rope",
       true,
       {{in("x", kF32), in("positions", kIndex)},
        {in("y", kF32)},
        {"num_heads", "head_dim", "rotary_dim", "theta", "scaling", "factor",
         "low_freq_factor", "high_freq_factor", "original_max_positions"}}});
}

} // namespace ingot::kernel_table
