//===- Pipeline.cpp - The phases of a compile, in order -------------------===//
//
//   import    ONNX, Hugging Face or GGUF -> ingot graph dialect (ModelIo.cpp)
//   graph     fold shape computations, propagate static shapes, CSE
//   fused     fusion passes (--fusion=off skips them)
//   quantized weights in quantised block formats (--quant, default none)
//   laid-out  weight layouts for the target's kernels (--pack-weights,
//             --act-quant)
//   plan      bound dynamic dims, lower to plan steps, place buffers in
//             one arena
//   codegen   GPU kernels per target (--target cuda:...); nothing for cpu
//   artifact  serialise the plan and stream the weights into model.ingot,
//             lowering the GPU kernels to code objects (ModelIo.cpp)
//
//===----------------------------------------------------------------------===//
#include "codegen/Passes.h"
#include "codegen/cuda/CudaSerialize.h"
#include "compiler/Compiler.h"
#include "compiler/ModelIo.h"
#include "compiler/Targets.h"
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

/// What a phase's passes are configured from.
struct PhaseInputs {
  const CompileOptions &options;
  const std::vector<std::string> &maxDims; // --max-dim plus the importer's
  ModuleOp module;
  const TargetList &targets;
  const LlmConfig *llm; // LLMs only: the KV cache the kernels address
  bool actQuantAuto;    // --act-quant auto chose options.actQuant
};

/// One round: shape propagation tracks shape-vector values itself, so
/// Shape -> Gather -> Concat -> Reshape chains resolve without a second
/// canonicalise + propagate (which changed no plan in the e2e suites).
void addGraphPasses(OpPassManager &pm, const PhaseInputs &) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createCanonicalize());
  fn.addPass(createPropagateShapes());
  fn.addPass(mlir::createCSEPass());
}

/// Order matters: add+norm takes the residual adds before the linear
/// epilogue could; merged projections expose the slices that the attention
/// absorbs; generic elementwise fusion takes what no named pattern did.
void addFusionPasses(OpPassManager &pm, const PhaseInputs &in) {
  if (!in.options.fusion)
    return;
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createRaiseGelu());
  fn.addPass(createRaiseLayerNorm());
  fn.addPass(createSqueezeConv());
  fn.addPass(createFuseAddNorm());
  fn.addPass(createMergeLinears());
  fn.addPass(createFuseRopeAttention());
  fn.addPass(createFuseLinearEpilogue());
  fn.addPass(createFuseMatMulIntegerEpilogue());
  fn.addPass(createFoldConvBatchNorm());
  fn.addPass(createFuseConvActivation());
  fn.addPass(createFoldConvInputAffine());
  fn.addPass(createFuseAttention());
  fn.addPass(createCanonicalize());
  fn.addPass(createFuseElementwise());
}

void addQuantPasses(OpPassManager &pm, const PhaseInputs &in) {
  const CompileOptions &options = in.options;
  // Without --quant, a pre-quantised checkpoint (GGUF, GPTQ, AWQ) keeps its
  // own formats, which its importer recorded on @main.
  std::string mode = options.quant;
  ModuleOp module = in.module;
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (mode == "none" && main && main->hasAttr("ingot.stored_formats"))
    mode = "stored";
  if (mode == "none")
    return;
  QuantizeWeightsOptions q;
  q.mode = mode;
  q.groupSize = options.groupSize;
  q.scheme = options.quantScheme;
  q.exclude.assign(options.quantExclude.begin(), options.quantExclude.end());
  q.lmHead = options.quantLmHead;
  q.embed = options.quantEmbed;
  pm.nest<func::FuncOp>().addPass(createQuantizeWeights(q));
}

/// --quant only touches "nk" linear weights (HF models); say so rather
/// than hand back an unquantised artifact without a word.
void warnIfNothingQuantised(const PhaseInputs &in) {
  const CompileOptions &options = in.options;
  if (options.quant == "none")
    return;
  bool any = false;
  ModuleOp module = in.module;
  module.walk([&](graph::ParamOp p) { any |= bool(p.getQuant()); });
  if (!any)
    llvm::errs() << "warning: " << options.modelPath << ": --quant "
                 << options.quant << " found no weight to quantise (only the "
                    "weights of \"nk\" linears are, i.e. Hugging Face "
                    "projections; ONNX MatMul weights are not yet)\n";
}

/// --act-quant int8 only changes linears whose weights are q8/q4/q4m in
/// groups of 32, or q8 per channel, with whole panels: say so when none
/// was.
void warnIfNothingPacked(const PhaseInputs &in) {
  if (in.options.actQuant == "none" || in.actQuantAuto)
    return;
  bool any = false;
  ModuleOp module = in.module;
  module.walk([&](graph::LinearOp l) { any |= l.getWLayout() == "q16"; });
  if (!any)
    llvm::errs() << "warning: " << in.options.modelPath << ": --act-quant "
                 << in.options.actQuant
                 << " found no linear to change (it "
                    "needs q8, q4 or q4m weights in groups of 32, or q8 "
                    "per channel, e.g. from --quant int4, --quant int8 "
                    "[--group-size 0] or a GGUF's Q8_0/Q4_0/Q4_1 blocks)\n";
}

void addLayoutPasses(OpPassManager &pm, const PhaseInputs &in) {
  if (in.options.packWeights)
    pm.nest<func::FuncOp>().addPass(createPackWeights());
  if (in.options.actQuant == "int8") {
    PackWeightsOptions q16;
    q16.layout = "q16";
    pm.nest<func::FuncOp>().addPass(createPackWeights(q16));
  }
}

void addPlanPasses(OpPassManager &pm, const PhaseInputs &in) {
  ComputeBoundsOptions bounds;
  bounds.maxDims.assign(in.maxDims.begin(), in.maxDims.end());
  bounds.defaultMaxDim = in.options.defaultMaxDim;
  // GPU plans reserve device memory once: every buffer needs a bound.
  bounds.runTimeSizes = in.targets.cudaArchs.empty();
  pm.nest<func::FuncOp>().addPass(createComputeBounds(bounds));
  pm.addPass(createLowerToPlan());
  PlanMemoryOptions memory;
  // CUDA's silu_mul over its own packed [gate | up] input must walk the
  // rows in order in one block (activation.cuh): 156 us a layer at 53
  // rows on an H200, against one thread per element when y has its own
  // memory. The CPU shares the plan and pays rows x I floats of arena.
  if (!in.targets.cudaArchs.empty())
    memory.keepApart = {"silu_mul"};
  // The CUDA concat kernel copies every input, unchecked on a device with
  // its inputs in place: the CPU's skips them.
  memory.concatInPlace = in.targets.cudaArchs.empty();
  pm.nest<func::FuncOp>().addPass(createPlanMemory(memory));
}

void addCodegenPasses(OpPassManager &pm, const PhaseInputs &in) {
  if (in.targets.cudaArchs.empty())
    return;
  codegen::GenerateCudaKernelsOptions cuda;
  cuda.chips.assign(in.targets.cudaArchs.begin(), in.targets.cudaArchs.end());
  pm.addPass(codegen::createGenerateCudaKernels(cuda));
  codegen::InstantiateCudaTemplatesOptions templates;
  if (in.llm) {
    templates.kvLayout = in.llm->kvLayout;
    templates.kvBlockSize = in.llm->blockSize;
  }
  pm.addPass(codegen::createInstantiateCudaTemplates(templates));
}

/// A step without a CUDA kernel sends the whole plan to the CPU at run
/// time: say how much is covered, and the first step that is not.
void reportCudaCoverage(const PhaseInputs &in) {
  if (in.targets.cudaArchs.empty())
    return;
  int64_t steps = 0, covered = 0;
  std::string first;
  ModuleOp module = in.module;
  module.walk([&](plan::KernelOp k) {
    ++steps;
    const bool has = k->hasAttr("ingot.cuda_kernel");
    covered += has;
    if (!has && first.empty())
      first =
          "'" + k.getKernel().str() + "' from '" + k.getOrigin().str() + "'";
  });
  if (covered == steps)
    return;
  llvm::errs() << "warning: " << in.options.modelPath << ": CUDA kernels "
               << "for " << covered << " of " << steps << " steps (the first "
               << "without one: " << first << "); the runtime runs this "
               << "artifact on the CPU\n";
}

/// One phase of the pipeline: --compile-to stops after it, --dump-ir
/// writes NN-<name>.mlir after it.
struct Phase {
  const char *name;
  const char *failure; // "<model>: <failure> failed: <diagnostics>"
  void (*addPasses)(OpPassManager &, const PhaseInputs &); // null: import
  void (*afterPasses)(const PhaseInputs &) = nullptr;
};

const Phase kPhases[] = {
    {"import", "import", nullptr},
    {"graph", "graph optimisation", addGraphPasses},
    {"fused", "fusion", addFusionPasses},
    {"quantized", "quantisation", addQuantPasses, warnIfNothingQuantised},
    {"laid-out", "weight layout", addLayoutPasses, warnIfNothingPacked},
    {"plan", "planning", addPlanPasses},
    {"codegen", "code generation", addCodegenPasses, reportCudaCoverage},
};
/// The last phase, after every IR phase: writing model.ingot.
constexpr const char *kArtifactPhase = "artifact";

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

Status checkOptions(const CompileOptions &options) {
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
  if (options.actQuant != "auto" && options.actQuant != "none" &&
      options.actQuant != "int8")
    return Status::error("act-quant '" + options.actQuant +
                         "' is not known; known: auto, none, int8");
  if (!options.dumpIrDir.empty())
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.dumpIrDir))
      return Status::error("cannot create " + options.dumpIrDir + ": " +
                           ec.message());
  return Status::ok();
}

/// --act-quant auto: int8 activations for a language model (Hugging Face
/// or GGUF) compiled for the CPU alone, as llama.cpp computes its own
/// files (SmolLM2's Q4_1 GGUF: the same 128 greedy tokens as llama.cpp,
/// perplexity +0.44%, decode 1.5x); f32 activations otherwise. An ONNX
/// graph says itself how exact it must be (e.g. MatMulNBits'
/// accuracy_level), and the CUDA kernels read f32 activations.
std::string resolveActQuant(const CompileOptions &options, bool isLlm,
                            const TargetList &targets) {
  if (options.actQuant != "auto")
    return options.actQuant;
  return isLlm && targets.cudaArchs.empty() ? "int8" : "none";
}

} // namespace

const std::vector<std::string> &phaseNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const Phase &phase : kPhases)
      list.push_back(phase.name);
    list.push_back(kArtifactPhase);
    return list;
  }();
  return names;
}

Status compileModel(const CompileOptions &options, llvm::raw_ostream &irOut) {
  if (Status s = checkOptions(options); !s)
    return s;
  TargetList targets;
  if (Status s = parseTargets(options.targets, &targets); !s)
    return s;
  // The CUDA kernels read row-major blocks with f32 activations.
  if (options.actQuant == "int8" && !targets.cudaArchs.empty())
    return Status::error(options.modelPath + ": --act-quant " +
                         options.actQuant +
                         " is for the CPU target only; "
                         "the CUDA kernels keep f32 activations");
  DialectRegistry registry;
  if (!targets.cudaArchs.empty())
    codegen::registerCudaCodegen(registry);
  MLIRContext context(registry);
  context.loadDialect<graph::IngotDialect, plan::PlanDialect,
                      func::FuncDialect>();
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagnostics += (diagnostics.empty() ? "" : "\n") + describe(diag);
    else if (diag.getSeverity() == DiagnosticSeverity::Warning)
      llvm::errs() << "warning: " << options.modelPath << ": " << describe(diag)
                   << "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  ImportedModel model;
  if (Status s = importModel(options, *module, model); !s)
    return s;

  CompileOptions effective = options;
  effective.actQuant = resolveActQuant(options, model.isLlm, targets);
  const PhaseInputs inputs{effective,
                           model.maxDims,
                           *module,
                           targets,
                           model.isLlm ? &model.hfInfo.llm : nullptr,
                           options.actQuant == "auto"};
  for (size_t i = 0; i < std::size(kPhases); ++i) {
    const Phase &phase = kPhases[i];
    PassManager pm(&context);
    if (phase.addPasses)
      phase.addPasses(pm, inputs);
    if (phase.addPasses ? failed(pm.run(*module)) : failed(verify(*module)))
      return Status::error(options.modelPath + ": " + phase.failure +
                           " failed: " + diagnostics);
    if (phase.afterPasses)
      phase.afterPasses(inputs);
    if (!options.dumpIrDir.empty())
      if (Status s = writeIr(*module, options.dumpIrDir, i + 1, phase.name); !s)
        return s;
    if (options.compileTo == phase.name) {
      module->print(irOut);
      return Status::ok();
    }
  }
  if (options.compileTo == kArtifactPhase)
    return Status::error(std::string("--compile-to=") + kArtifactPhase +
                         ": the artifact is a file; use -o instead");
  Status written = writeModelArtifact(options, *module, model, targets);
  if (!written && !diagnostics.empty()) // e.g. from lowering GPU kernels
    return Status::error(written.message() + ": " + diagnostics);
  return written;
}

} // namespace ingot::compiler
