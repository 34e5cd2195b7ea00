// REQUIRES: cuda-toolkit
// RUN: ingot-opt %s --ingot-generate-cuda-kernels=chips=sm_80,sm_100 \
// RUN:   | ingot-opt --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm),gpu-module-to-binary{format=isa})' \
// RUN:   | FileCheck %s

// The lowering the artifact writer runs (codegen/cuda/CudaSerialize.cpp),
// up to PTX: one object per chip, each with its PTX version, the kernel as
// a visible entry with one parameter per pointer and size, the block size
// as .maxntid, and libdevice's erf linked in rather than called.
// CHECK:      gpu.binary @ingot_cuda
// CHECK-SAME: chip = "sm_80"
// CHECK-SAME: .version 8.0\0A.target sm_80
// CHECK-SAME: .visible .entry ingot_s0_fused_elementwise(
// CHECK-SAME: .maxntid 256, 1, 1
// CHECK-NOT:  __nv_erff
// CHECK-SAME: chip = "sm_100"
// CHECK-SAME: .version 8.6\0A.target sm_100
// CHECK-SAME: .visible .entry ingot_s0_fused_elementwise(
func.func @main(%x: memref<?x64xf32> {plan.dims = ["seq", ""], plan.name = "x"}) -> memref<?x64xf32> {
  %y = plan.alloc {max_shape = array<i64: 128, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "fused_elementwise" ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>)
      {args = {ops = "erf", args = array<i64: 0, -1>, constants = array<f64>}, origin = "erf"}
  return %y : memref<?x64xf32>
}
