//===- ModelIo.cpp - The model read in and the artifact written out -------===//
//
// Pipeline.cpp runs the phases between these two ends of a compile.
//
//===----------------------------------------------------------------------===//
#include "compiler/ModelIo.h"
#include "codegen/cuda/CudaSerialize.h"
#include "compiler/PlanToManifest.h"
#include "compiler/gguf/GgufImporter.h"
#include "compiler/onnx/OnnxImporter.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace ingot::compiler {

Status importModel(const CompileOptions &options, ModuleOp module,
                   ImportedModel &model) {
  model.maxDims = options.maxDims;
  // A directory is a Hugging Face model; a file is GGUF (by its magic, or
  // its name, so a damaged one gets the GGUF reader's message) or ONNX.
  // Both of the first are LLMs with the same engine step.
  const bool isGguf = isGgufFile(options.modelPath) ||
                      llvm::sys::path::extension(options.modelPath) == ".gguf";
  model.isLlm = isGguf || llvm::sys::fs::is_directory(options.modelPath);
  if (options.externalWeights &&
      !llvm::sys::fs::is_directory(options.modelPath))
    return Status::error(
        options.modelPath + ": --weights=external keeps the weights of a " +
        "Hugging Face directory's safetensors files outside the artifact; " +
        "this " + (isGguf ? "GGUF" : "ONNX") + " file's weights must be " +
        "embedded (drop --weights=external)");
  if (!model.isLlm) {
    OnnxImportOptions importOptions;
    importOptions.inputShapes = options.inputShapes;
    return importOnnx(options.modelPath, importOptions, module, &model.weights);
  }
  HfImportOptions hf;
  hf.blockSize = options.blockSize;
  hf.maxTokensPerStep = options.maxTokensPerStep;
  hf.maxSeqs = options.maxSeqs;
  hf.maxContext = options.maxContext;
  hf.target = options.targets.empty() ? "cpu" : options.targets.front();
  hf.kvLayout = options.kvLayout;
  hf.kvDtype = options.kvDtype;
  if (Status s = isGguf ? importGguf(options.modelPath, hf, module,
                                     &model.weights, &model.hfInfo)
                        : importHf(options.modelPath, hf, module,
                                   &model.weights, &model.hfInfo);
      !s)
    return s;
  model.maxDims.insert(model.maxDims.end(), model.hfInfo.maxDims.begin(),
                       model.hfInfo.maxDims.end());
  return Status::ok();
}

Status writeModelArtifact(const CompileOptions &options, ModuleOp module,
                          ImportedModel &model, const TargetList &targets) {
  if (options.outputPath.empty())
    return Status::error("no output path (-o) given");
  ArtifactInfo info;
  info.modelName =
      llvm::sys::path::stem(llvm::sys::path::remove_leading_dotslash(
                                StringRef(options.modelPath).rtrim('/')))
          .str();
  info.targets = targets.names;
  if (!targets.cudaArchs.empty()) {
    GpuTarget &cuda = info.gpuTargets.emplace_back();
    std::vector<uint8_t> &code = info.gpuCode.emplace_back();
    if (Status s = codegen::serializeCudaKernels(module, targets.cudaArchs,
                                                 &cuda, &code);
        !s)
      return Status::error(options.modelPath + ": " + s.message());
    if (cuda.objects.empty()) { // no step had a generated kernel
      info.gpuTargets.pop_back();
      info.gpuCode.pop_back();
    }
  }
  if (model.isLlm) {
    info.llm = &model.hfInfo.llm;
    info.tokenizer = &model.hfInfo.tokenizer;
    info.generation = &model.hfInfo.generation;
  }
  info.externalWeights = options.externalWeights;
  info.modelPath = options.modelPath;
  return writeArtifact(module, *model.weights, info, options.outputPath);
}

} // namespace ingot::compiler
