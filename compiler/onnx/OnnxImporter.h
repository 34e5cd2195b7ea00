//===- OnnxImporter.h - ONNX models into the ingot dialect ------*- C++ -*-===//
#pragma once

#include "ingot/Status.h"
#include "ingot/WeightSource.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ingot::compiler {

struct OnnxImportOptions {
  /// --shape NAME=2x5x48: pins every dim of a graph input.
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// Parses the ONNX file at `path` and fills `module` with `func.func @main`:
///  - arguments: the graph inputs that are not initializers, typed
///    tensor<...> with `?` for dim_param/unknown dims, with arg attributes
///    `ingot.name` (StringAttr) and `ingot.dims` (ArrayAttr of StringAttr:
///    the symbol for a dynamic dim, "" for a static one);
///  - results: the graph outputs, with result attribute `ingot.name`;
///  - every op carries a NameLoc with its ONNX node name;
///  - integer/bool tensors of at most kMaxInlineConstantElements elements and
///    one-element float tensors (epsilons, exponents, mask values) become
///    `ingot.constant`; every other initializer or Constant value becomes an
///    `ingot.param`. `weights` then produces their bytes, reading
///    external data files (location/offset/length) relative to the model.
/// Errors name the file, and the node name, op type and opset.
Status importOnnx(const std::string &path, const OnnxImportOptions &options,
                  mlir::ModuleOp module,
                  std::unique_ptr<WeightSource> *weights);

/// The ops the importer handles, with the opset range of each, for the
/// generated support table: {op type, first opset, last opset, domain}.
struct SupportedOnnxOp {
  std::string opType;
  int64_t minOpset;
  int64_t maxOpset;
  std::string domain; // "" for the default ONNX domain
};
std::vector<SupportedOnnxOp> supportedOnnxOps();

} // namespace ingot::compiler
