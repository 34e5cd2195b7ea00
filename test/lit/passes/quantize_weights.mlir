// RUN: ingot-opt %s --ingot-quantize-weights="mode=int8" --split-input-file | FileCheck %s --check-prefix=INT8
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int4 scheme=sym" --split-input-file | FileCheck %s --check-prefix=INT4
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int4" --split-input-file | FileCheck %s --check-prefix=INT4DEFAULT
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int4 lm-head=same" --split-input-file | FileCheck %s --check-prefix=HEADSAME
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int8 lm-head=none" --split-input-file | FileCheck %s --check-prefix=HEADNONE
// RUN: not ingot-opt %s --ingot-quantize-weights="mode=int8 lm-head=int2" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADHEAD
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int4 scheme=asym group-size=128" --split-input-file | FileCheck %s --check-prefix=ASYM
// RUN: ingot-opt %s --ingot-quantize-weights="mode=fp8" --split-input-file | FileCheck %s --check-prefix=FP8
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int8 group-size=0" --split-input-file | FileCheck %s --check-prefix=CHANNEL
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int8 exclude=lm_head,*mlp*" --split-input-file | FileCheck %s --check-prefix=EXCL
// RUN: ingot-opt %s --ingot-quantize-weights --split-input-file | FileCheck %s --check-prefix=NONE
// RUN: not ingot-opt %s --ingot-quantize-weights="mode=int3" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: not ingot-opt %s --ingot-quantize-weights="mode=int8 scheme=asym" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADSCHEME
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int8 embed=same" --split-input-file | FileCheck %s --check-prefix=EMBED
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int4 embed=same" --split-input-file | FileCheck %s --check-prefix=EMBED4
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int4 embed=int8" --split-input-file | FileCheck %s --check-prefix=EMBED4INT8
// RUN: ingot-opt %s --ingot-quantize-weights="mode=int8 embed=same lm-head=none" --split-input-file | FileCheck %s --check-prefix=EMBEDONLY
// RUN: not ingot-opt %s --ingot-quantize-weights="mode=int8 embed=int2" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADEMBED
// RUN: not ingot-opt %s --ingot-quantize-weights="mode=int8 embed=or" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADEMBEDWORD

// An "nk" linear's row-major weight gets a quantised param; the original
// is gone once nothing reads it. K = 576 is not a multiple of 128: the
// format still records group 128 (the last group of a row is 64 values).
// INT8-LABEL: func.func @plain
// INT8-NOT: ingot.param "q.weight" :
// INT8: %[[W:.+]] = ingot.param "q.weight@q8g32" {parts = ["q.weight"], quant = #ingot.quant<"q8", group = 32>} : tensor<64x576xf32>
// INT8: ingot.linear %arg0, %[[W]] {w_layout = "nk"}
// INT4: ingot.param "q.weight@q4g32" {parts = ["q.weight"], quant = #ingot.quant<"q4", group = 32>} : tensor<64x576xf32>
// INT4DEFAULT: ingot.param "q.weight@q4mg32" {parts = ["q.weight"], quant = #ingot.quant<"q4m", group = 32>} : tensor<64x576xf32>
// ASYM: ingot.param "q.weight@q4mg128" {parts = ["q.weight"], quant = #ingot.quant<"q4m", group = 128>} : tensor<64x576xf32>
// FP8: ingot.param "q.weight@f8e4m3g576" {parts = ["q.weight"], quant = #ingot.quant<"f8e4m3", group = 576>}
// CHANNEL: ingot.param "q.weight@q8g576" {parts = ["q.weight"], quant = #ingot.quant<"q8", group = 576>}
// NONE-LABEL: func.func @plain
// NONE-NOT: #ingot.quant
// BADMODE: unknown mode 'int3'; known: none, int8, int4, fp8
// BADSCHEME: int8 is symmetric only; scheme=asym needs int4
// BADHEAD: lm-head must be same, int8 or none, got 'int2'
func.func @plain(%x: tensor<?x576xf32>) -> tensor<?x64xf32> {
  %w = ingot.param "q.weight" : tensor<64x576xf32>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x576xf32>, tensor<64x576xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// A tied embedding keeps its table for the gather; the lm_head linear gets
// a quantised copy. --exclude matches the linear's node name too.
// INT8-LABEL: func.func @tied
// INT8: %[[E:.+]] = ingot.param "embed" : tensor<100x16xf32>
// INT8: %[[Q:.+]] = ingot.param "embed@q8g16" {parts = ["embed"], quant = #ingot.quant<"q8", group = 16>} : tensor<100x16xf32>
// INT8: ingot.gather %[[E]]
// INT8: ingot.linear %{{.+}}, %[[Q]] {w_layout = "nk"}
// EXCL-LABEL: func.func @tied
// EXCL-NOT: #ingot.quant
// With int4 the lm_head defaults to int8 (q8), unless lm-head says else.
// INT4DEFAULT-LABEL: func.func @tied
// INT4DEFAULT: ingot.param "embed@q8g16" {parts = ["embed"], quant = #ingot.quant<"q8", group = 16>}
// HEADSAME-LABEL: func.func @tied
// HEADSAME: ingot.param "embed@q4mg16" {parts = ["embed"], quant = #ingot.quant<"q4m", group = 16>}
// HEADNONE-LABEL: func.func @tied
// HEADNONE-NOT: #ingot.quant
// embed=same: the gather reads the table in the linears' format; asked for
// the same format as the lm_head, one quantised table serves both and the
// original is gone.
// EMBED-LABEL: func.func @tied
// EMBED-NOT: ingot.param "embed" :
// EMBED: %[[Q:.+]] = ingot.param "embed@q8g16" {parts = ["embed"], quant = #ingot.quant<"q8", group = 16>}
// EMBED-NOT: ingot.param
// EMBED: ingot.gather %[[Q]]
// EMBED: ingot.linear %{{.+}}, %[[Q]] {w_layout = "nk"}
// int4: the gather takes q4m, the lm_head keeps its q8 default: two tables.
// EMBED4-LABEL: func.func @tied
// EMBED4-NOT: ingot.param "embed" :
// EMBED4-DAG: %[[G:.+]] = ingot.param "embed@q4mg16" {parts = ["embed"], quant = #ingot.quant<"q4m", group = 16>}
// EMBED4-DAG: %[[H:.+]] = ingot.param "embed@q8g16" {parts = ["embed"], quant = #ingot.quant<"q8", group = 16>}
// EMBED4: ingot.gather %[[G]]
// EMBED4: ingot.linear %{{.+}}, %[[H]] {w_layout = "nk"}
// embed=int8 with int4: both ask for q8, so one table again.
// EMBED4INT8-LABEL: func.func @tied
// EMBED4INT8: %[[Q:.+]] = ingot.param "embed@q8g16"
// EMBED4INT8-NOT: ingot.param
// EMBED4INT8: ingot.gather %[[Q]]
// EMBED4INT8: ingot.linear %{{.+}}, %[[Q]]
// With the lm_head kept, it keeps the original and the gather a copy.
// EMBEDONLY-LABEL: func.func @tied
// EMBEDONLY-DAG: %[[E:.+]] = ingot.param "embed" :
// EMBEDONLY-DAG: %[[Q:.+]] = ingot.param "embed@q8g16"
// EMBEDONLY: ingot.gather %[[Q]]
// EMBEDONLY: ingot.linear %{{.+}}, %[[E]]
// BADEMBED: embed must be none, same or int8, got 'int2'
// BADEMBEDWORD: embed must be none, same or int8, got 'or'
func.func @tied(%ids: tensor<?xi64>) -> tensor<?x100xf32> {
  %e = ingot.param "embed" : tensor<100x16xf32>
  %h = ingot.gather %e, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %y = ingot.linear %h, %e {w_layout = "nk"} : (tensor<?x16xf32>, tensor<100x16xf32>) -> tensor<?x100xf32> loc("lm_head")
  return %y : tensor<?x100xf32>
}

// -----

// Must not fire: "kn" weights (ONNX MatMul), packed weights, 1-D params
// (the bias of a quantised linear stays as it is). --exclude matches source
// tensor names.
// INT8-LABEL: func.func @not_quantised
// INT8: ingot.param "kn.weight" : tensor<64x32xf32>
// INT8: ingot.param "packed@nk16" {{{.*}}layout = "nk16"
// INT8: ingot.param "mlp.up.weight@q8g32"
// INT8: ingot.param "mlp.up.bias" : tensor<48xf32>
// HEADNONE-LABEL: func.func @not_quantised
// EXCL-LABEL: func.func @not_quantised
// EXCL: ingot.param "mlp.up.weight" : tensor<48x32xf32>
// EXCL-NOT: #ingot.quant
func.func @not_quantised(%x: tensor<?x64xf32>, %x2: tensor<?x32xf32>) -> (tensor<?x32xf32>, tensor<?x64xf32>, tensor<?x48xf32>) {
  %kn = ingot.param "kn.weight" : tensor<64x32xf32>
  %a = ingot.linear %x, %kn {w_layout = "kn"} : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %p = ingot.param "packed@nk16" {layout = "nk16", parts = ["packed"]} : tensor<64x64xf32>
  %b = ingot.linear %x, %p {w_layout = "nk16"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %w = ingot.param "mlp.up.weight" : tensor<48x32xf32>
  %bias = ingot.param "mlp.up.bias" : tensor<48xf32>
  %c = ingot.linear %x2, %w, %bias {w_layout = "nk"} : (tensor<?x32xf32>, tensor<48x32xf32>, tensor<48xf32>) -> tensor<?x48xf32>
  return %a, %b, %c : tensor<?x32xf32>, tensor<?x64xf32>, tensor<?x48xf32>
}

// -----

// A merged projection keeps its parts; all its linears share one copy.
// INT4-LABEL: func.func @merged
// INT4-COUNT-1: ingot.param "q+k@q4g32" {parts = ["q.weight", "k.weight"], quant = #ingot.quant<"q4", group = 32>} : tensor<96x64xf16>
// INT4-NOT: ingot.param "q+k@q4g32"
// EXCL-LABEL: func.func @merged
// EXCL: quant = #ingot.quant<"q8", group = 32>
func.func @merged(%x: tensor<?x64xf32>) -> (tensor<?x96xf32>, tensor<?x96xf32>) {
  %w = ingot.param "q+k" {parts = ["q.weight", "k.weight"]} : tensor<96x64xf16>
  %y = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<96x64xf16>) -> tensor<?x96xf32>
  %z = ingot.linear %x, %w {w_layout = "nk"} : (tensor<?x64xf32>, tensor<96x64xf16>) -> tensor<?x96xf32>
  return %y, %z : tensor<?x96xf32>, tensor<?x96xf32>
}

// -----

// A bf16 table read through a quantised param gives f32 rows: the cast to
// f32 that followed the gather goes, another reader gets a cast back.
// EMBED-LABEL: func.func @tied_bf16
// EMBED: %[[Q:.+]] = ingot.param "embed@q8g16" {{.*}} : tensor<100x16xbf16>
// EMBED: %[[R:.+]] = ingot.gather %[[Q]], %{{.+}} {axis = 0 : i64} : (tensor<100x16xbf16>, tensor<?xi64>) -> tensor<?x16xf32>
// EMBED: %[[B:.+]] = ingot.cast %[[R]] : tensor<?x16xf32> -> tensor<?x16xbf16>
// EMBED-NOT: ingot.cast
// EMBED: ingot.linear %[[R]], %[[Q]]
// EMBED: return %{{.+}}, %[[B]]
// NONE-LABEL: func.func @tied_bf16
// NONE: ingot.gather {{.*}} -> tensor<?x16xbf16>
func.func @tied_bf16(%ids: tensor<?xi64>) -> (tensor<?x100xf32>, tensor<?x16xbf16>) {
  %e = ingot.param "embed" : tensor<100x16xbf16>
  %h = ingot.gather %e, %ids {axis = 0 : i64} : (tensor<100x16xbf16>, tensor<?xi64>) -> tensor<?x16xbf16>
  %f = ingot.cast %h : tensor<?x16xbf16> -> tensor<?x16xf32>
  %y = ingot.linear %f, %e {w_layout = "nk"} : (tensor<?x16xf32>, tensor<100x16xbf16>) -> tensor<?x100xf32> loc("lm_head")
  return %y, %h : tensor<?x100xf32>, tensor<?x16xbf16>
}
