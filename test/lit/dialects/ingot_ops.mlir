// RUN: ingot-opt %s --split-input-file | ingot-opt --split-input-file | FileCheck %s
// RUN: ingot-opt %s --split-input-file --mlir-print-op-generic | ingot-opt --split-input-file | FileCheck %s

// Round trip of every ingot op: print (in the custom or the generic form),
// re-parse, print again. Dims are dynamic wherever the op allows it; their
// names live in `ingot.dims`.

// CHECK-LABEL: func.func @param
// CHECK:         %[[W:.+]] = ingot.param "layers.0.q_proj.weight" : tensor<64x64xf32>
// CHECK:         return %[[W]]
func.func @param() -> tensor<64x64xf32> {
  %w = ingot.param "layers.0.q_proj.weight" : tensor<64x64xf32>
  return %w : tensor<64x64xf32>
}

// -----

// CHECK-LABEL: func.func @param_quantised
// CHECK:         ingot.param "w@q4mg128" {parts = ["w"], quant = #ingot.quant<"q4m", group = 128>} : tensor<64x576xbf16>
func.func @param_quantised() -> tensor<64x576xbf16> {
  %w = ingot.param "w@q4mg128" {parts = ["w"], quant = #ingot.quant<"q4m", group = 128>} : tensor<64x576xbf16>
  return %w : tensor<64x576xbf16>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK:         %[[S:.+]] = ingot.constant dense<[2, 8, 64]> : tensor<3xi64>
// CHECK:         %[[F:.+]] = ingot.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[B:.+]] = ingot.constant dense<[true, false]> : tensor<2xi1>
// CHECK:         return %[[S]], %[[F]], %[[B]]
func.func @constant() -> (tensor<3xi64>, tensor<f32>, tensor<2xi1>) {
  %s = ingot.constant dense<[2, 8, 64]> : tensor<3xi64>
  %f = ingot.constant dense<1.0> : tensor<f32>
  %b = ingot.constant dense<[true, false]> : tensor<2xi1>
  return %s, %f, %b : tensor<3xi64>, tensor<f32>, tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @binary
// CHECK-SAME:    (%[[X:.+]]: tensor<?x64xf32> {ingot.dims = ["seq", ""]}, %[[B:.+]]: tensor<64xf32>)
// CHECK:         %[[ADD:.+]] = ingot.add %[[X]], %[[B]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK:         %[[SUB:.+]] = ingot.sub %[[ADD]], %[[B]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK:         %[[MUL:.+]] = ingot.mul %[[B]], %[[SUB]] : (tensor<64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK:         %[[DIV:.+]] = ingot.div %[[MUL]], %[[X]] : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK:         %[[POW:.+]] = ingot.pow %[[DIV]], %[[B]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK:         return %[[POW]]
func.func @binary(%x: tensor<?x64xf32> {ingot.dims = ["seq", ""]}, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = ingot.add %x, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = ingot.sub %0, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %2 = ingot.mul %b, %1 : (tensor<64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %3 = ingot.div %2, %x : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %4 = ingot.pow %3, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %4 : tensor<?x64xf32>
}

// -----

// Integer arithmetic on shape vectors, e.g. seq_len - 1.
// CHECK-LABEL: func.func @binary_int
// CHECK-SAME:    (%[[S:.+]]: tensor<2xi64>, %[[ONE:.+]]: tensor<i64>)
// CHECK:         %[[R:.+]] = ingot.sub %[[S]], %[[ONE]] : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
// CHECK:         return %[[R]]
func.func @binary_int(%s: tensor<2xi64>, %one: tensor<i64>) -> tensor<2xi64> {
  %r = ingot.sub %s, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>
// CHECK:         %[[SQRT:.+]] = ingot.sqrt %[[X]] : tensor<?x?x64xf32>
// CHECK:         %[[NEG:.+]] = ingot.neg %[[SQRT]] : tensor<?x?x64xf32>
// CHECK:         %[[EXP:.+]] = ingot.exp %[[NEG]] : tensor<?x?x64xf32>
// CHECK:         %[[ERF:.+]] = ingot.erf %[[EXP]] : tensor<?x?x64xf32>
// CHECK:         %[[TANH:.+]] = ingot.tanh %[[ERF]] : tensor<?x?x64xf32>
// CHECK:         %[[SIG:.+]] = ingot.sigmoid %[[TANH]] : tensor<?x?x64xf32>
// CHECK:         %[[RELU:.+]] = ingot.relu %[[SIG]] : tensor<?x?x64xf32>
// CHECK:         return %[[RELU]]
func.func @unary(%x: tensor<?x?x64xf32> {ingot.dims = ["batch", "seq", ""]}) -> tensor<?x?x64xf32> {
  %0 = ingot.sqrt %x : tensor<?x?x64xf32>
  %1 = ingot.neg %0 : tensor<?x?x64xf32>
  %2 = ingot.exp %1 : tensor<?x?x64xf32>
  %3 = ingot.erf %2 : tensor<?x?x64xf32>
  %4 = ingot.tanh %3 : tensor<?x?x64xf32>
  %5 = ingot.sigmoid %4 : tensor<?x?x64xf32>
  %6 = ingot.relu %5 : tensor<?x?x64xf32>
  return %6 : tensor<?x?x64xf32>
}

// -----

// Three-way broadcasting of a causal mask: a scalar fill value, a 2-D
// condition and a 3-D score tensor.
// CHECK-LABEL: func.func @where
// CHECK-SAME:    (%[[C:.+]]: tensor<?x?xi1>, %[[X:.+]]: tensor<f32>, %[[Y:.+]]: tensor<1x?x?xf32>)
// CHECK:         %[[R:.+]] = ingot.where %[[C]], %[[X]], %[[Y]] : (tensor<?x?xi1>, tensor<f32>, tensor<1x?x?xf32>) -> tensor<1x?x?xf32>
// CHECK:         return %[[R]]
func.func @where(%c: tensor<?x?xi1>, %x: tensor<f32>, %y: tensor<1x?x?xf32>) -> tensor<1x?x?xf32> {
  %r = ingot.where %c, %x, %y : (tensor<?x?xi1>, tensor<f32>, tensor<1x?x?xf32>) -> tensor<1x?x?xf32>
  return %r : tensor<1x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK-SAME:    (%[[X:.+]]: tensor<?x4xf32>)
// CHECK:         %[[I:.+]] = ingot.cast %[[X]] : tensor<?x4xf32> -> tensor<?x4xi64>
// CHECK:         %[[B:.+]] = ingot.cast %[[I]] : tensor<?x4xi64> -> tensor<?x4xi1>
// CHECK:         return %[[I]], %[[B]]
func.func @cast(%x: tensor<?x4xf32>) -> (tensor<?x4xi64>, tensor<?x4xi1>) {
  %i = ingot.cast %x : tensor<?x4xf32> -> tensor<?x4xi64>
  %b = ingot.cast %i : tensor<?x4xi64> -> tensor<?x4xi1>
  return %i, %b : tensor<?x4xi64>, tensor<?x4xi1>
}

// -----

// ONNX's narrow types, and saturate kept only where it was set.
// CHECK-LABEL: func.func @cast_narrow
// CHECK:         ingot.cast %{{.+}} : tensor<4xf32> -> tensor<4xf8E4M3FN>
// CHECK:         ingot.cast %{{.+}} {saturate = 0 : i64} : tensor<4xf32> -> tensor<4xf8E5M2>
// CHECK:         ingot.cast %{{.+}} : tensor<4xf4E2M1FN> -> tensor<4xi4>
// CHECK:         ingot.cast %{{.+}} : tensor<4xi4> -> tensor<4xui2>
func.func @cast_narrow(%x: tensor<4xf32>, %y: tensor<4xf4E2M1FN>)
    -> (tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xui2>) {
  %a = ingot.cast %x : tensor<4xf32> -> tensor<4xf8E4M3FN>
  %b = ingot.cast %x {saturate = 0 : i64} : tensor<4xf32> -> tensor<4xf8E5M2>
  %c = ingot.cast %y : tensor<4xf4E2M1FN> -> tensor<4xi4>
  %d = ingot.cast %c : tensor<4xi4> -> tensor<4xui2>
  return %a, %b, %d : tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xui2>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64x256xf32>, %[[V:.+]]: tensor<256xf32>)
// CHECK:         %[[MM:.+]] = ingot.matmul %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
// CHECK:         %[[MV:.+]] = ingot.matmul %[[MM]], %[[V]] : (tensor<?x?x256xf32>, tensor<256xf32>) -> tensor<?x?xf32>
// CHECK:         return %[[MV]]
func.func @matmul(%x: tensor<?x?x64xf32>, %w: tensor<64x256xf32>, %v: tensor<256xf32>) -> tensor<?x?xf32> {
  %0 = ingot.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
  // 1-D promotion: the trailing vector loses its added dim.
  %1 = ingot.matmul %0, %v : (tensor<?x?x256xf32>, tensor<256xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// Zero points are optional; rhs's may hold one value per column.
// CHECK-LABEL: func.func @matmul_integer
// CHECK: ingot.matmul_integer %{{.*}}, %{{.*}} lhs_zp %{{.*}} rhs_zp %{{.*}} : (tensor<?x7x37xui8>, tensor<37x19xi8>, tensor<ui8>, tensor<19xi8>) -> tensor<?x7x19xi32>
// CHECK: ingot.matmul_integer %{{.*}}, %{{.*}} : (tensor<?x7x37xui8>, tensor<37x19xi8>) -> tensor<?x7x19xi32>
// CHECK: ingot.matmul_integer %{{.*}}, %{{.*}} lhs_zp %{{.*}} scale %{{.*}} bias %{{.*}} {activation = "gelu"} : (tensor<?x7x37xui8>, tensor<37x19xi8>, tensor<ui8>, tensor<19xf32>, tensor<19xf32>) -> tensor<?x7x19xf32>
// CHECK: ingot.matmul_integer %{{.*}}, %{{.*}} scale %{{.*}} : (tensor<?x7x37xui8>, tensor<37x19xi8>, tensor<f32>) -> tensor<?x7x19xf32>
func.func @matmul_integer(%a: tensor<?x7x37xui8>, %w: tensor<37x19xi8>, %azp: tensor<ui8>, %wzp: tensor<19xi8>, %s: tensor<19xf32>, %b: tensor<19xf32>, %s1: tensor<f32>) -> (tensor<?x7x19xi32>, tensor<?x7x19xi32>, tensor<?x7x19xf32>, tensor<?x7x19xf32>) {
  %0 = ingot.matmul_integer %a, %w lhs_zp %azp rhs_zp %wzp : (tensor<?x7x37xui8>, tensor<37x19xi8>, tensor<ui8>, tensor<19xi8>) -> tensor<?x7x19xi32>
  %1 = ingot.matmul_integer %a, %w : (tensor<?x7x37xui8>, tensor<37x19xi8>) -> tensor<?x7x19xi32>
  %2 = ingot.matmul_integer %a, %w lhs_zp %azp scale %s bias %b {activation = "gelu"} : (tensor<?x7x37xui8>, tensor<37x19xi8>, tensor<ui8>, tensor<19xf32>, tensor<19xf32>) -> tensor<?x7x19xf32>
  %3 = ingot.matmul_integer %a, %w scale %s1 : (tensor<?x7x37xui8>, tensor<37x19xi8>, tensor<f32>) -> tensor<?x7x19xf32>
  return %0, %1, %2, %3 : tensor<?x7x19xi32>, tensor<?x7x19xi32>, tensor<?x7x19xf32>, tensor<?x7x19xf32>
}

// CHECK-LABEL: func.func @dynamic_quantize_linear
// CHECK: ingot.dynamic_quantize_linear %{{.*}} : (tensor<?x384xf32>) -> (tensor<?x384xui8>, tensor<f32>, tensor<ui8>)
func.func @dynamic_quantize_linear(%x: tensor<?x384xf32>) -> (tensor<?x384xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = ingot.dynamic_quantize_linear %x : (tensor<?x384xf32>) -> (tensor<?x384xui8>, tensor<f32>, tensor<ui8>)
  return %y, %s, %z : tensor<?x384xui8>, tensor<f32>, tensor<ui8>
}

// -----

// ConvInteger: the result's channels come from the weight, its spatial
// dims from the window (here 9x11 padded by 1, stride 2 -> 5x6).
// CHECK-LABEL: func.func @conv_integer
// CHECK: ingot.conv_integer %{{.*}}, %{{.*}} x_zp %{{.*}} w_zp %{{.*}} {{{.*}}} : (tensor<?x3x9x11xui8>, tensor<5x3x3x3xi8>, tensor<ui8>, tensor<5xi8>) -> tensor<?x5x5x6xi32>
// CHECK: ingot.conv_integer %{{.*}}, %{{.*}} {{{.*}}} : (tensor<?x3x9x11xui8>, tensor<5x3x3x3xi8>) -> tensor<?x5x5x6xi32>
func.func @conv_integer(%x: tensor<?x3x9x11xui8>, %w: tensor<5x3x3x3xi8>, %xzp: tensor<ui8>, %wzp: tensor<5xi8>) -> (tensor<?x5x5x6xi32>, tensor<?x5x5x6xi32>) {
  %0 = ingot.conv_integer %x, %w x_zp %xzp w_zp %wzp {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x9x11xui8>, tensor<5x3x3x3xi8>, tensor<ui8>, tensor<5xi8>) -> tensor<?x5x5x6xi32>
  %1 = ingot.conv_integer %x, %w {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x9x11xui8>, tensor<5x3x3x3xi8>) -> tensor<?x5x5x6xi32>
  return %0, %1 : tensor<?x5x5x6xi32>, tensor<?x5x5x6xi32>
}

// -----

// CHECK-LABEL: func.func @gemm_with_c
// CHECK-SAME:    (%[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<32x64xf32>, %[[C:.+]]: tensor<32xf32>)
// CHECK:         %[[R:.+]] = ingot.gemm %[[A]], %[[B]], %[[C]] {alpha = 1.000000e+00 : f32, beta = 5.000000e-01 : f32, transA = 0 : i64, transB = 1 : i64} : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
// CHECK:         return %[[R]]
func.func @gemm_with_c(%a: tensor<?x64xf32>, %b: tensor<32x64xf32>, %c: tensor<32xf32>) -> tensor<?x32xf32> {
  %r = ingot.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 0.5 : f32, transA = 0 : i64, transB = 1 : i64}
      : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_without_c
// CHECK-SAME:    (%[[A:.+]]: tensor<64x?xf32>, %[[B:.+]]: tensor<64x32xf32>)
// CHECK:         %[[R:.+]] = ingot.gemm %[[A]], %[[B]] {alpha = 2.000000e+00 : f32, beta = 0.000000e+00 : f32, transA = 1 : i64, transB = 0 : i64} : (tensor<64x?xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
// CHECK:         return %[[R]]
func.func @gemm_without_c(%a: tensor<64x?xf32>, %b: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %r = ingot.gemm %a, %b {alpha = 2.0 : f32, beta = 0.0 : f32, transA = 1 : i64, transB = 0 : i64}
      : (tensor<64x?xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK-SAME:    (%[[S:.+]]: tensor<?x4x?x?xf32>)
// CHECK:         %[[P:.+]] = ingot.softmax %[[S]] {axis = -1 : i64} : tensor<?x4x?x?xf32>
// CHECK:         return %[[P]]
func.func @softmax(%s: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %p = ingot.softmax %s {axis = -1 : i64} : tensor<?x4x?x?xf32>
  return %p : tensor<?x4x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_with_bias
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK:         %[[Y:.+]] = ingot.layer_norm %[[X]], %[[G]], %[[B]] {axis = -1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK:         return %[[Y]]
func.func @layer_norm_with_bias(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = ingot.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_without_bias
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>, %[[G:.+]]: tensor<?x64xf32>)
// CHECK:         %[[Y:.+]] = ingot.layer_norm %[[X]], %[[G]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<?x?x64xf32>, tensor<?x64xf32>) -> tensor<?x?x64xf32>
// CHECK:         return %[[Y]]
func.func @layer_norm_without_bias(%x: tensor<?x?x64xf32>, %g: tensor<?x64xf32>) -> tensor<?x?x64xf32> {
  %y = ingot.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<?x?x64xf32>, tensor<?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_mean
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK:         %[[KEEP:.+]] = ingot.reduce_mean %[[X]] {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
// CHECK:         %[[DROP:.+]] = ingot.reduce_mean %[[X]] {axes = array<i64: 0, 2>, keepdims = 0 : i64} : tensor<?x?x64xf32> -> tensor<?xf32>
// CHECK:         %[[ALL:.+]] = ingot.reduce_mean %[[X]] {axes = array<i64>, keepdims = 0 : i64} : tensor<?x?x64xf32> -> tensor<f32>
// CHECK:         return %[[KEEP]], %[[DROP]], %[[ALL]]
func.func @reduce_mean(%x: tensor<?x?x64xf32>) -> (tensor<?x?x1xf32>, tensor<?xf32>, tensor<f32>) {
  %keep = ingot.reduce_mean %x {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  %drop = ingot.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = 0 : i64} : tensor<?x?x64xf32> -> tensor<?xf32>
  // Empty axes reduce every axis.
  %all = ingot.reduce_mean %x {axes = array<i64>, keepdims = 0 : i64} : tensor<?x?x64xf32> -> tensor<f32>
  return %keep, %drop, %all : tensor<?x?x1xf32>, tensor<?xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x4x16xf32>)
// CHECK:         %[[T:.+]] = ingot.transpose %[[X]] {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
// CHECK:         %[[R:.+]] = ingot.transpose %[[T]] {perm = array<i64>} : tensor<?x4x?x16xf32> -> tensor<16x?x4x?xf32>
// CHECK:         return %[[R]]
func.func @transpose(%x: tensor<?x?x4x16xf32>) -> tensor<16x?x4x?xf32> {
  %t = ingot.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  // An empty perm reverses the dims.
  %r = ingot.transpose %t {perm = array<i64>} : tensor<?x4x?x16xf32> -> tensor<16x?x4x?xf32>
  return %r : tensor<16x?x4x?xf32>
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>, %[[S:.+]]: tensor<4xi64>)
// CHECK:         %[[R:.+]] = ingot.reshape %[[X]], %[[S]] {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
// CHECK:         return %[[R]]
func.func @reshape(%x: tensor<?x?x64xf32>, %s: tensor<4xi64>) -> tensor<?x?x4x16xf32> {
  %r = ingot.reshape %x, %s {allowzero = 0 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %r : tensor<?x?x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK-SAME:    (%[[X:.+]]: tensor<1x?xf32>)
// CHECK:         %[[SQ:.+]] = ingot.squeeze %[[X]] {axes = array<i64: 0>} : tensor<1x?xf32> -> tensor<?xf32>
// CHECK:         %[[UN:.+]] = ingot.unsqueeze %[[SQ]] {axes = array<i64: 0, -1>} : tensor<?xf32> -> tensor<1x?x1xf32>
// CHECK:         return %[[UN]]
func.func @squeeze_unsqueeze(%x: tensor<1x?xf32>) -> tensor<1x?x1xf32> {
  %sq = ingot.squeeze %x {axes = array<i64: 0>} : tensor<1x?xf32> -> tensor<?xf32>
  %un = ingot.unsqueeze %sq {axes = array<i64: 0, -1>} : tensor<?xf32> -> tensor<1x?x1xf32>
  return %un : tensor<1x?x1xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME:    (%[[A:.+]]: tensor<1xi64>, %[[B:.+]]: tensor<2xi64>, %[[X:.+]]: tensor<?x64xf32>, %[[Y:.+]]: tensor<?x64xf32>)
// CHECK:         %[[V:.+]] = ingot.concat %[[A]], %[[B]] {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
// CHECK:         %[[T:.+]] = ingot.concat %[[X]], %[[Y]], %[[X]] {axis = -2 : i64} : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK:         return %[[V]], %[[T]]
func.func @concat(%a: tensor<1xi64>, %b: tensor<2xi64>, %x: tensor<?x64xf32>, %y: tensor<?x64xf32>) -> (tensor<3xi64>, tensor<?x64xf32>) {
  %v = ingot.concat %a, %b {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %t = ingot.concat %x, %y, %x {axis = -2 : i64} : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %v, %t : tensor<3xi64>, tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK-SAME:    (%[[TABLE:.+]]: tensor<1000x64xf32>, %[[IDS:.+]]: tensor<?x?xi64>, %[[S:.+]]: tensor<3xi64>, %[[I:.+]]: tensor<i32>)
// CHECK:         %[[E:.+]] = ingot.gather %[[TABLE]], %[[IDS]] {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK:         %[[D:.+]] = ingot.gather %[[S]], %[[I]] {axis = -1 : i64} : (tensor<3xi64>, tensor<i32>) -> tensor<i64>
// CHECK:         return %[[E]], %[[D]]
func.func @gather(%table: tensor<1000x64xf32>, %ids: tensor<?x?xi64>, %s: tensor<3xi64>, %i: tensor<i32>) -> (tensor<?x?x64xf32>, tensor<i64>) {
  %e = ingot.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  // A scalar index into a shape vector drops the axis.
  %d = ingot.gather %s, %i {axis = -1 : i64} : (tensor<3xi64>, tensor<i32>) -> tensor<i64>
  return %e, %d : tensor<?x?x64xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @shape
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK:         %[[ALL:.+]] = ingot.shape %[[X]] {end = 9223372036854775807 : i64, start = 0 : i64} : tensor<?x?x64xf32> -> tensor<3xi64>
// CHECK:         %[[MID:.+]] = ingot.shape %[[X]] {end = -1 : i64, start = 1 : i64} : tensor<?x?x64xf32> -> tensor<1xi64>
// CHECK:         return %[[ALL]], %[[MID]]
func.func @shape(%x: tensor<?x?x64xf32>) -> (tensor<3xi64>, tensor<1xi64>) {
  %all = ingot.shape %x {start = 0 : i64, end = 9223372036854775807 : i64} : tensor<?x?x64xf32> -> tensor<3xi64>
  // Opset 15 start/end: dims [1, rank - 1).
  %mid = ingot.shape %x {start = 1 : i64, end = -1 : i64} : tensor<?x?x64xf32> -> tensor<1xi64>
  return %all, %mid : tensor<3xi64>, tensor<1xi64>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape
// CHECK-SAME:    (%[[S:.+]]: tensor<2xi64>)
// CHECK:         %[[Z:.+]] = ingot.constant_of_shape %[[S]] {value = 1.000000e+00 : f64} : tensor<2xi64> -> tensor<?x?xf32>
// CHECK:         %[[I:.+]] = ingot.constant_of_shape %[[S]] {value = 0.000000e+00 : f64} : tensor<2xi64> -> tensor<?x?xi64>
// CHECK:         return %[[Z]], %[[I]]
func.func @constant_of_shape(%s: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<?x?xi64>) {
  %z = ingot.constant_of_shape %s {value = 1.0 : f64} : tensor<2xi64> -> tensor<?x?xf32>
  %i = ingot.constant_of_shape %s {value = 0.0 : f64} : tensor<2xi64> -> tensor<?x?xi64>
  return %z, %i : tensor<?x?xf32>, tensor<?x?xi64>
}

// -----

// CHECK-LABEL: func.func @trilu
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?xf32>, %[[K:.+]]: tensor<i64>)
// CHECK:         %[[U:.+]] = ingot.trilu %[[X]] {upper = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK:         %[[L:.+]] = ingot.trilu %[[U]], %[[K]] {upper = 0 : i64} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
// CHECK:         return %[[L]]
func.func @trilu(%x: tensor<?x?xf32>, %k: tensor<i64>) -> tensor<?x?xf32> {
  %u = ingot.trilu %x {upper = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %l = ingot.trilu %u, %k {upper = 0 : i64} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  return %l : tensor<?x?xf32>
}

// -----

// Pow takes an integer base too; the result has the base's type.
// CHECK-LABEL: func.func @pow_integer_base
// CHECK:         ingot.pow %{{.+}}, %{{.+}} : (tensor<?x3xi64>, tensor<3xf32>) -> tensor<?x3xi64>
func.func @pow_integer_base(%a: tensor<?x3xi64>, %b: tensor<3xf32>) -> tensor<?x3xi64> {
  %r = ingot.pow %a, %b : (tensor<?x3xi64>, tensor<3xf32>) -> tensor<?x3xi64>
  return %r : tensor<?x3xi64>
}
