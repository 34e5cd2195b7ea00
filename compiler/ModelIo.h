//===- ModelIo.h - The model read in and the artifact written out -*- C++
//-*-===//
//
// The two ends of a compile (Pipeline.cpp runs the phases between): the
// importer chosen by what the model path is, and the artifact writer with
// the GPU code objects of the targets.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Compiler.h"
#include "compiler/Targets.h"
#include "compiler/hf/HfImporter.h"
#include "ingot/WeightSource.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace ingot::compiler {

/// What the importer hands the later phases besides the module.
struct ImportedModel {
  std::unique_ptr<WeightSource> weights;
  bool isLlm = false;
  HfModelInfo hfInfo;               // LLMs only
  std::vector<std::string> maxDims; // --max-dim plus the LLM's own
};

/// Imports the model at options.modelPath into `module`: a directory is a
/// Hugging Face model, a file GGUF (by magic or name) or ONNX.
Status importModel(const CompileOptions &options, mlir::ModuleOp module,
                   ImportedModel &model);

/// Writes the artifact of the planned `module` to options.outputPath.
Status writeModelArtifact(const CompileOptions &options, mlir::ModuleOp module,
                          ImportedModel &model, const TargetList &targets);

} // namespace ingot::compiler
