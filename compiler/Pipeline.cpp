//===- Pipeline.cpp - The phases of a compile, in order -------------------===//
//
//   import    ONNX -> ingot graph dialect
//   graph     fold shape computations, propagate static shapes, CSE
//   fused     fusion passes (--fusion=off skips them)
//   quantized weights in quantised block formats (--quant, default none)
//   laid-out  weight layouts for the target's kernels (--pack-weights=off)
//   plan      bound dynamic dims, lower to plan steps, place buffers in one arena
//   artifact  serialise the plan and stream the weights into model.ingot
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"
#include "compiler/PlanToManifest.h"
#include "compiler/gguf/GgufImporter.h"
#include "compiler/hf/HfImporter.h"
#include "compiler/onnx/OnnxImporter.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ingot::compiler {
namespace {

void addGraphPasses(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createCanonicalize());
  fn.addPass(createPropagateShapes());
  fn.addPass(createCanonicalize());
  fn.addPass(createPropagateShapes());
  fn.addPass(mlir::createCSEPass());
}

/// Order matters: add+norm takes the residual adds before the linear
/// epilogue could; merged projections expose the slices that the attention
/// absorbs; generic elementwise fusion takes what no named pattern did.
void addFusionPasses(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createFuseAddNorm());
  fn.addPass(createMergeLinears());
  fn.addPass(createFuseRopeAttention());
  fn.addPass(createFuseLinearEpilogue());
  fn.addPass(createCanonicalize());
  fn.addPass(createFuseElementwise());
}

void addQuantPasses(OpPassManager &pm, const CompileOptions &options,
                    const std::string &mode) {
  QuantizeWeightsOptions q;
  q.mode = mode;
  q.groupSize = options.groupSize;
  q.scheme = options.quantScheme;
  q.exclude.assign(options.quantExclude.begin(), options.quantExclude.end());
  q.lmHead = options.quantLmHead;
  pm.nest<func::FuncOp>().addPass(createQuantizeWeights(q));
}

void addLayoutPasses(OpPassManager &pm) {
  pm.nest<func::FuncOp>().addPass(createPackWeights());
}

void addPlanPasses(OpPassManager &pm, const CompileOptions &options,
                   const std::vector<std::string> &maxDims) {
  ComputeBoundsOptions bounds;
  bounds.maxDims.assign(maxDims.begin(), maxDims.end());
  bounds.defaultMaxDim = options.defaultMaxDim;
  pm.nest<func::FuncOp>().addPass(createComputeBounds(bounds));
  pm.addPass(createLowerToPlan());
  pm.nest<func::FuncOp>().addPass(createPlanMemory());
}

/// --quant only touches "nk" linear weights (HF models); say so rather
/// than hand back an unquantised artifact without a word.
void warnIfNothingQuantised(ModuleOp module, const CompileOptions &options) {
  bool any = false;
  module.walk([&](graph::ParamOp p) { any |= bool(p.getQuant()); });
  if (!any)
    llvm::errs() << "warning: " << options.modelPath << ": --quant "
                 << options.quant << " found no weight to quantise (only the "
                    "weights of \"nk\" linears are, i.e. Hugging Face "
                    "projections; ONNX MatMul weights are not yet)\n";
}

/// Formats an MLIR diagnostic as "node 'NAME': message".
std::string describe(Diagnostic &diag) {
  std::string where;
  Location loc = diag.getLocation();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    where = "node '" + name.getName().str() + "': ";
  return where + diag.str();
}

Status writeIr(ModuleOp module, const std::string &dir, int index,
               const std::string &phase) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, (index < 10 ? "0" : "") +
                                    std::to_string(index) + "-" + phase +
                                    ".mlir");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return Status::error("cannot write " + path.str().str() + ": " +
                         ec.message());
  module.print(os);
  return Status::ok();
}

} // namespace

const std::vector<std::string> &phaseNames() {
  static const std::vector<std::string> names = {
      "import",   "graph", "fused",   "quantized",
      "laid-out", "plan",  "artifact"};
  return names;
}

Status compileModel(const CompileOptions &options, llvm::raw_ostream &irOut) {
  const auto &phases = phaseNames();
  if (!options.compileTo.empty() &&
      std::find(phases.begin(), phases.end(), options.compileTo) ==
          phases.end()) {
    std::string list;
    for (const std::string &p : phases)
      list += (list.empty() ? "" : ", ") + p;
    return Status::error("unknown phase '" + options.compileTo +
                         "'; phases: " + list);
  }
  for (const std::string &t : options.targets)
    if (t != "cpu")
      return Status::error("target '" + t +
                           "' is not supported yet; supported: cpu");
  if (!options.dumpIrDir.empty())
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.dumpIrDir))
      return Status::error("cannot create " + options.dumpIrDir + ": " +
                           ec.message());

  MLIRContext context;
  context.loadDialect<graph::IngotDialect, plan::PlanDialect,
                      func::FuncDialect>();
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagnostics += (diagnostics.empty() ? "" : "\n") + describe(diag);
    return success();
  });
  auto fail = [&](const std::string &phase) {
    return Status::error(options.modelPath + ": " + phase + " failed: " +
                         diagnostics);
  };

  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  std::unique_ptr<WeightSource> weights;
  // A directory is a Hugging Face model; a file is GGUF (by its magic, or
  // its name, so a damaged one gets the GGUF reader's message) or ONNX.
  // Both of the first are LLMs with the same engine step.
  const bool isGguf = isGgufFile(options.modelPath) ||
                      llvm::sys::path::extension(options.modelPath) == ".gguf";
  const bool isHf = isGguf || llvm::sys::fs::is_directory(options.modelPath);
  HfModelInfo hfInfo;
  std::vector<std::string> maxDims = options.maxDims;
  if (isHf) {
    HfImportOptions hf;
    hf.blockSize = options.blockSize;
    hf.maxTokensPerStep = options.maxTokensPerStep;
    hf.maxSeqs = options.maxSeqs;
    hf.maxContext = options.maxContext;
    hf.target = options.targets.empty() ? "cpu" : options.targets.front();
    hf.kvLayout = options.kvLayout;
    if (Status s = isGguf ? importGguf(options.modelPath, hf, *module,
                                       &weights, &hfInfo)
                          : importHf(options.modelPath, hf, *module, &weights,
                                     &hfInfo);
        !s)
      return s;
    maxDims.insert(maxDims.end(), hfInfo.maxDims.begin(), hfInfo.maxDims.end());
  } else {
    OnnxImportOptions importOptions;
    importOptions.inputShapes = options.inputShapes;
    if (Status s =
            importOnnx(options.modelPath, importOptions, *module, &weights);
        !s)
      return s;
  }
  if (failed(mlir::verify(*module)))
    return fail("import");

  // Each phase: run its passes, dump, and stop if it is the requested one.
  auto finishPhase = [&](int index, const std::string &phase) -> Status {
    if (!options.dumpIrDir.empty())
      if (Status s = writeIr(*module, options.dumpIrDir, index, phase); !s)
        return s;
    if (options.compileTo == phase)
      module->print(irOut);
    return Status::ok();
  };
  if (Status s = finishPhase(1, "import"); !s || options.compileTo == "import")
    return s;

  PassManager graphPm(&context);
  addGraphPasses(graphPm);
  if (failed(graphPm.run(*module)))
    return fail("graph optimisation");
  if (Status s = finishPhase(2, "graph"); !s || options.compileTo == "graph")
    return s;

  PassManager fusionPm(&context);
  if (options.fusion)
    addFusionPasses(fusionPm);
  if (failed(fusionPm.run(*module)))
    return fail("fusion");
  if (Status s = finishPhase(3, "fused"); !s || options.compileTo == "fused")
    return s;

  PassManager quantPm(&context);
  // Without --quant, a pre-quantised checkpoint (GGUF, GPTQ, AWQ) keeps its
  // own formats, which its importer recorded on @main.
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (options.quant != "none")
    addQuantPasses(quantPm, options, options.quant);
  else if (main && main->hasAttr("ingot.stored_formats"))
    addQuantPasses(quantPm, options, "stored");
  if (failed(quantPm.run(*module)))
    return fail("quantisation");
  if (options.quant != "none")
    warnIfNothingQuantised(*module, options);
  if (Status s = finishPhase(4, "quantized");
      !s || options.compileTo == "quantized")
    return s;

  PassManager layoutPm(&context);
  if (options.packWeights)
    addLayoutPasses(layoutPm);
  if (failed(layoutPm.run(*module)))
    return fail("weight layout");
  if (Status s = finishPhase(5, "laid-out");
      !s || options.compileTo == "laid-out")
    return s;

  PassManager planPm(&context);
  addPlanPasses(planPm, options, maxDims);
  if (failed(planPm.run(*module)))
    return fail("planning");
  if (Status s = finishPhase(6, "plan"); !s || options.compileTo == "plan")
    return s;

  ArtifactInfo info;
  info.modelName = llvm::sys::path::stem(
                       llvm::sys::path::remove_leading_dotslash(
                           StringRef(options.modelPath).rtrim('/')))
                       .str();
  info.targets = options.targets;
  if (isHf) {
    info.llm = &hfInfo.llm;
    info.tokenizer = &hfInfo.tokenizer;
    info.generation = &hfInfo.generation;
  }
  if (options.compileTo == "artifact" || options.outputPath.empty())
    return options.compileTo == "artifact"
               ? Status::error("--compile-to=artifact: the artifact is a "
                               "file; use -o instead")
               : Status::error("no output path (-o) given");
  return writeArtifact(*module, *weights, info, options.outputPath);
}

} // namespace ingot::compiler
