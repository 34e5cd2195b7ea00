//===- Passes.td - ingot's code generation passes ----------*- tablegen -*-===//
//
// The `codegen` phase: per-target emitters over the planned module. They run
// after ingot-plan-memory, so every buffer and step is final; what they add
// (gpu.modules, and a launch description on each step they cover) is what
// the artifact writer serialises per target.
//
//===----------------------------------------------------------------------===//
#ifndef INGOT_CODEGEN_PASSES
#define INGOT_CODEGEN_PASSES

include "mlir/Pass/PassBase.td"

def GenerateCudaKernels : Pass<"ingot-generate-cuda-kernels", "mlir::ModuleOp"> {
  let summary = "Generate CUDA kernels for the plan's elementwise steps";
  let description = [{
    Every `plan.kernel` that computes one f32 value per output element (a
    `fused_elementwise` program without a reduction, or a single
    elementwise kernel: `add`, `mul`, `exp`, `unary_math`, `binary_math`
    max/min, ...) becomes a `gpu.func` in `gpu.module @ingot_cuda`, whose
    targets are one `#nvvm.target` per chip. The step gets
    `ingot.cuda_kernel`: the kernel symbol, the block size, which operand
    sizes the grid, and the argument list as (kind, operand, axis) triples
    the runtime evaluates at launch (codegen/gpu/ElementwiseKernel.h).
    Other steps (GEMM, attention, norms) are left to kernel templates and
    get no attribute.

    Before:
    ```mlir
    plan.kernel "fused_elementwise" ins(%x, %b : memref<?x64xf32>, memref<64xf32>)
        outs(%y : memref<?x64xf32>) {args = {ops = "add exp", args = array<i64: 0, 1, 2, -1>,
        constants = array<f64>}, origin = "gelu"}
    ```
    After (`chips=sm_90`):
    ```mlir
    plan.kernel "fused_elementwise" ins(%x, %b : memref<?x64xf32>, memref<64xf32>)
        outs(%y : memref<?x64xf32>) {args = {...}, origin = "gelu",
        ingot.cuda_kernel = {args = array<i64: 1, 0, 0, 1, 1, 0, 1, 2, 0, 2, 2, 0,
          3, 2, 0, 3, 2, 1, 4, 0, 0, 4, 0, 1, 4, 1, 0, 4, 1, 1>, block = 256 : i64,
          grid_operand = 2 : i64, symbol = @ingot_cuda::@ingot_s0_fused_elementwise}}
    gpu.module @ingot_cuda [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
      gpu.func @ingot_s0_fused_elementwise(%x: !llvm.ptr, %b: !llvm.ptr, %y: !llvm.ptr,
          %numel: i64, %d0: i64, %d1: i64, ...) kernel
    ```
  }];
  let options = [
    ListOption<"chips", "chips", "std::string",
               "CUDA architectures to build for (sm_80, sm_90, sm_100, sm_120)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the elementwise kernels">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark on each step left without a kernel, saying why">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect", "mlir::cf::ControlFlowDialect"];
}

def InstantiateCudaTemplates
    : Pass<"ingot-instantiate-cuda-templates", "mlir::ModuleOp"> {
  let summary = "Compute the plan's LLM steps with CUDA kernel templates";
  let description = [{
    Every `plan.kernel` that ingot-generate-cuda-kernels left without a
    kernel and that a template of codegen/kernels/cuda computes (rms_norm,
    add_rms_norm, silu_mul, gelu, gather of embedding rows, linear with
    f32/f16/bf16 weights in any layout, rope, paged_attention and
    rope_paged_attention) gets `ingot.cuda_source`: CUDA C++ wrappers that
    call the template with the step's static shapes, dtypes and constants,
    and `ingot.cuda_kernel`: one launch description per wrapper, in launch
    order. A wrapper identical, its name aside, to an earlier step's (the
    same layer shape again) is not emitted: the launch names the earlier
    kernel. The artifact writer compiles all sources with NVRTC per
    architecture and links them with the generated kernels into one cubin.

    Before:
    ```mlir
    plan.kernel "rms_norm" ins(%x, %w : memref<?x64xf32>, memref<64xbf16>)
        outs(%y : memref<?x64xf32>) {args = {epsilon = 1.0e-05 : f64}, origin = "norm"}
    ```
    After:
    ```mlir
    plan.kernel "rms_norm" ins(%x, %w : memref<?x64xf32>, memref<64xbf16>)
        outs(%y : memref<?x64xf32>) {args = {epsilon = 1.0e-05 : f64},
        ingot.cuda_kernel = [{args = array<i64: 1, 0, 0, 1, 1, 0, 1, 2, 0>,
          block = 64 : i64, grid = array<i64: 0, 64, 1>, grid_operand = 0 : i64,
          symbol = @ingot_cuda::@ingot_s0_rms_norm}
        ],
        ingot.cuda_source = "extern \"C\" __global__ void __launch_bounds__(64)
          ingot_s0_rms_norm(const float *p0, const ingot_k::Bf16 *p1, float *p2)
          { ingot_k::rmsNorm<64, 64, ingot_k::Bf16>(p0, nullptr, p1, nullptr, p2,
          0x1.4f8b58p-17f); }", origin = "norm"}
    ```
  }];
  let options = [
    Option<"kvLayout", "kv-layout", "std::string",
           /*default=*/"\"block,token,head,dim\"",
           "The KV cache layout the attention kernels address">,
    Option<"kvBlockSize", "kv-block-size", "int64_t", /*default=*/"16",
           "Tokens per KV-cache block">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark on each step left without a kernel, saying why">,
  ];
}

#endif // INGOT_CODEGEN_PASSES
