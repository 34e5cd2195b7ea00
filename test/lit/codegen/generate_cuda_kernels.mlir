// RUN: ingot-opt %s --split-input-file --ingot-generate-cuda-kernels=chips=sm_80,sm_90 | FileCheck %s
// RUN: ingot-opt %s --split-input-file --ingot-generate-cuda-kernels="chips=sm_90 block-size=128" | FileCheck %s --check-prefix=BLOCK128
// RUN: ingot-opt %s --split-input-file --ingot-generate-cuda-kernels="chips=sm_90 explain=true" 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: not ingot-opt %s --split-input-file --ingot-generate-cuda-kernels=chips=sm_75 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not ingot-opt %s --split-input-file --ingot-generate-cuda-kernels="chips=sm_90 block-size=100" 2>&1 | FileCheck %s --check-prefix=BADBLOCK

// --ingot-generate-cuda-kernels on hand-written plan IR. Kernel arguments
// are (kind, operand, axis) triples: 1 pointer, 2 numel, 3 dim, 4
// broadcast stride; operands count the step's inputs, then its output.

// A bias add broadcast over rows, then GELU's erf: the output's shape is
// known only at launch, so both inputs are read through strides and the
// kernel takes the output's two dims and two strides per input. One
// gpu.module holds the kernel for both chips.
// CHECK-LABEL: func.func @main
// CHECK:         plan.kernel "fused_elementwise"
// CHECK-SAME:      ingot.cuda_kernel = {args = array<i64: 1, 0, 0, 1, 1, 0, 1, 2, 0, 2, 2, 0, 3, 2, 0, 3, 2, 1, 4, 0, 0, 4, 0, 1, 4, 1, 0, 4, 1, 1>, block = 256 : i64, grid_operand = 2 : i64, symbol = @ingot_cuda::@ingot_s0_fused_elementwise}
// CHECK:       gpu.module @ingot_cuda [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, #nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK:         gpu.func @ingot_s0_fused_elementwise(%[[X:.+]]: !llvm.ptr, %[[B:.+]]: !llvm.ptr, %[[Y:.+]]: !llvm.ptr, %[[N:.+]]: i64, %[[D0:.+]]: i64, %[[D1:.+]]: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK:           %[[I:.+]] = arith.index_castui
// CHECK:           arith.cmpi ult, %[[I]], %[[N]] : i64
// CHECK:           %[[COL:.+]] = arith.remui %[[I]], %[[D1]] : i64
// CHECK:           %[[ROW:.+]] = arith.divui %[[I]], %[[D1]] : i64
// CHECK:           llvm.getelementptr %[[X]]
// CHECK:           llvm.getelementptr %[[B]]
// CHECK:           %[[S:.+]] = arith.addf
// CHECK:           %[[H:.+]] = arith.mulf %[[S]], %{{.+}} : f32
// CHECK:           %[[E:.+]] = math.erf %[[H]] : f32
// CHECK:           %[[P:.+]] = llvm.getelementptr %[[Y]][%[[I]]]
// CHECK:           llvm.store %[[E]], %[[P]] : f32, !llvm.ptr
// CHECK:           gpu.return
// BLOCK128:      block = 128 : i64
// BLOCK128:      known_block_size = array<i32: 128, 1, 1>
// BADCHIP:       error: unknown CUDA architecture 'sm_75'; known: sm_80, sm_86, sm_89, sm_90, sm_100, sm_120
// BADBLOCK:      error: block-size must be a multiple of 32 in [32, 1024]
func.func @main(%x: memref<?x64xf32> {plan.dims = ["seq", ""], plan.name = "x"}) -> memref<?x64xf32> {
  %b = plan.param "bias" : memref<64xf32>
  %y = plan.alloc {max_shape = array<i64: 128, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "fused_elementwise" ins(%x, %b : memref<?x64xf32>, memref<64xf32>) outs(%y : memref<?x64xf32>)
      {args = {ops = "add const mul erf", args = array<i64: 0, 1, 0, -1, 2, 3, 4, -1>, constants = array<f64: 0.70710678>}, origin = "gelu"}
  return %y : memref<?x64xf32>
}

// -----

// Static shapes: an input of the output's shape is read at the output's
// index and a one-element input at index 0, so the kernel takes no dims
// or strides. Single elementwise kernels (add, unary_math leaky_relu with
// its alpha, binary_math max) are one-instruction programs.
// CHECK-LABEL: func.func @main
// CHECK:         plan.kernel "add" {{.*}} ingot.cuda_kernel = {args = array<i64: 1, 0, 0, 1, 1, 0, 1, 2, 0, 2, 2, 0>, block = 256 : i64, grid_operand = 2 : i64, symbol = @ingot_cuda::@ingot_s0_add}
// CHECK:         plan.kernel "unary_math" {{.*}} symbol = @ingot_cuda::@ingot_s1_unary_math}
// CHECK:         plan.kernel "binary_math" {{.*}} symbol = @ingot_cuda::@ingot_s2_binary_math}
// CHECK:         gpu.func @ingot_s0_add(%[[A:.+]]: !llvm.ptr, %[[S:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64) kernel
// CHECK:           %[[I:.+]] = arith.index_castui
// CHECK:           %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK:           llvm.getelementptr %[[A]][%[[I]]]
// CHECK:           llvm.getelementptr %[[S]][%[[ZERO]]]
// CHECK:           arith.addf
// CHECK:         gpu.func @ingot_s1_unary_math
// CHECK:           %[[ALPHA:.+]] = arith.constant 2.000000e-01 : f32
// CHECK:           %[[SCALED:.+]] = arith.mulf %[[ALPHA]], %[[V:.+]] : f32
// CHECK:           %[[NEG:.+]] = arith.cmpf olt, %[[V]], %{{.+}} : f32
// CHECK:           arith.select %[[NEG]], %[[SCALED]], %[[V]] : f32
// CHECK:         gpu.func @ingot_s2_binary_math
// CHECK:           arith.maximumf
func.func @main(%a: memref<8x16xf32>, %s: memref<f32>) -> memref<8x16xf32> {
  %t = plan.alloc {max_shape = array<i64: 8, 16>, offset = 0 : i64} : memref<8x16xf32>
  plan.kernel "add" ins(%a, %s : memref<8x16xf32>, memref<f32>) outs(%t : memref<8x16xf32>) {args = {}, origin = "add"}
  %u = plan.alloc {max_shape = array<i64: 8, 16>, offset = 512 : i64} : memref<8x16xf32>
  plan.kernel "unary_math" ins(%t : memref<8x16xf32>) outs(%u : memref<8x16xf32>) {args = {kind = "leaky_relu", alpha = 0.2 : f32}, origin = "lrelu"}
  %v = plan.alloc {max_shape = array<i64: 8, 16>, offset = 0 : i64} : memref<8x16xf32>
  plan.kernel "binary_math" ins(%u, %a : memref<8x16xf32>, memref<8x16xf32>) outs(%v : memref<8x16xf32>) {args = {kind = "max"}, origin = "max"}
  return %v : memref<8x16xf32>
}

// -----

// Must not fire: a GEMM, an int64 add (a shape computation), a fused
// chain that reduces its rows, and a bool compare. With no kernel at all
// the module gets no gpu.module and no gpu.container_module.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     ingot.cuda_kernel
// CHECK-NOT:     gpu.module
// EXPLAIN:       remark: no generated CUDA kernel: not an elementwise kernel
// EXPLAIN:       remark: no generated CUDA kernel: not one f32 output
// EXPLAIN:       remark: no generated CUDA kernel: reduces a row (no generated reduction kernel yet)
// EXPLAIN:       remark: no generated CUDA kernel: not an elementwise kernel
func.func @main(%x: memref<4x8xf32>, %w: memref<8x8xf32>, %i: memref<3xi64>) -> (memref<4x8xf32>, memref<3xi64>, memref<4x1xf32>, memref<4x8xi1>) {
  %none = plan.none
  %g = plan.alloc {max_shape = array<i64: 4, 8>, offset = 0 : i64} : memref<4x8xf32>
  plan.kernel "gemm" ins(%x, %w, %none : memref<4x8xf32>, memref<8x8xf32>, none) outs(%g : memref<4x8xf32>)
      {args = {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64}, origin = "fc"}
  %s = plan.alloc {max_shape = array<i64: 3>, offset = 128 : i64} : memref<3xi64>
  plan.kernel "add" ins(%i, %i : memref<3xi64>, memref<3xi64>) outs(%s : memref<3xi64>) {args = {}, origin = "shape_add"}
  %r = plan.alloc {max_shape = array<i64: 4, 1>, offset = 192 : i64} : memref<4x1xf32>
  plan.kernel "fused_elementwise" ins(%g : memref<4x8xf32>) outs(%r : memref<4x1xf32>)
      {args = {ops = "exp", args = array<i64: 0, -1>, constants = array<f64>, reduce = "sum", keepdims = 1 : i64}, origin = "sum_exp"}
  %c = plan.alloc {max_shape = array<i64: 4, 8>, offset = 256 : i64} : memref<4x8xi1>
  plan.kernel "compare" ins(%g, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xi1>) {args = {kind = "less"}, origin = "lt"}
  return %g, %s, %r, %c : memref<4x8xf32>, memref<3xi64>, memref<4x1xf32>, memref<4x8xi1>
}

// -----

// The fused program's gelu opcodes (decomposed GELU raised by
// ingot-fuse-elementwise): erf form and the tanh form as x·sigmoid(2u).
// CHECK-LABEL: func.func @main
// CHECK:         gpu.func @ingot_s0_fused_elementwise
// CHECK:           math.erf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:           gpu.return
func.func @main(%x: memref<?x64xf32> {plan.dims = ["seq", ""], plan.name = "x"}) -> memref<?x64xf32> {
  %y = plan.alloc {max_shape = array<i64: 128, 64>, offset = 0 : i64} : memref<?x64xf32>
  plan.kernel "fused_elementwise" ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>)
      {args = {ops = "gelu gelu_tanh", args = array<i64: 0, -1, 1, -1>, constants = array<f64>}, origin = "gelu_chain"}
  return %y : memref<?x64xf32>
}
