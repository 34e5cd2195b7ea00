//===- CompileCommand.cpp - `ingot compile` -------------------------------===//
#include "CliChecks.h"
#include "CliNumbers.h"
#include "CliParser.h"
#include "Commands.h"
#include "compiler/Compiler.h"
#include "compiler/gguf/GgufImporter.h"
#include "compiler/hf/HfImporter.h"
#include "compiler/onnx/OnnxImporter.h"
#include "ingot/KvCache.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

namespace ingot::cli {
namespace {

/// The integer flags of compile, each with its range.
void declareIntegerFlags(CommandLine &cl, compiler::CompileOptions *o) {
  cl.integer("--group-size", &o->groupSize, 0, int64_t(1) << 20,
             "values per scale along K (int8/int4: 32; 0 = per output "
             "channel, fp8's default)",
             "32");
  cl.integer("--block-size", &o->blockSize, 1, kMaxBlockSize,
             "LLM: KV-cache tokens per block");
  cl.integer("--max-tokens-per-step", &o->maxTokensPerStep, 1,
             kMaxTokensPerStep, "LLM: tokens one engine step may process");
  cl.integer("--max-seqs", &o->maxSeqs, 1, kMaxSeqs,
             "LLM: sequences one step may hold");
  cl.integer("--max-context", &o->maxContext, 1, kMaxContext,
             "LLM: longest sequence", "model's");
}

/// A flag whose value is one of `choices`: "FLAG takes WORDS, got 'V'".
void declareChoice(CommandLine &cl, const std::string &flag,
                   std::vector<std::string> choices, const std::string &words,
                   std::function<void(const std::string &)> store,
                   const std::string &help, const std::string &shown) {
  const std::string refusal = flag + " takes " + words + ", got '";
  std::string typeName;
  for (const std::string &c : choices)
    typeName += (typeName.empty() ? "" : "|") + c;
  cl.value(
      flag,
      [=](const std::string &v) {
        if (std::find(choices.begin(), choices.end(), v) == choices.end())
          throw FlagError(refusal + v + "'");
        store(v);
      },
      help, shown, typeName, refusal + "'");
}

/// The quantisation flags.
void declareQuantFlags(CommandLine &cl, compiler::CompileOptions *o) {
  declareChoice(
      cl, "--quant", {"none", "int8", "int4", "fp8"}, "none, int8, int4 or fp8",
      [o](const std::string &v) { o->quant = v; },
      "linear weights in a quantised format (none: a GGUF keeps its blocks; "
      "int8 = q8, int4 = q4m or q4)",
      o->quant);
  declareChoice(
      cl, "--quant-scheme", {"sym", "asym"}, "sym or asym",
      [o](const std::string &v) { o->quantScheme = v; },
      "int4: with a minimum (q4m, asym) or symmetric (q4, as GGUF Q4_0)",
      "asym");
  declareChoice(
      cl, "--quant-lm-head", {"same", "int8", "none"}, "same, int8 or none",
      [o](const std::string &v) { o->quantLmHead = v; },
      "the lm_head's format (int8 with --quant int4, else the same as the "
      "rest)",
      "same");
  declareChoice(
      cl, "--quant-embed", {"none", "same", "int8"}, "none, same or int8",
      [o](const std::string &v) { o->quantEmbed = v; },
      "embedding tables: none (kept as they are), same (as --quant) or int8; "
      "a tied table quantised like the lm_head is stored once",
      o->quantEmbed);
  declareChoice(
      cl, "--act-quant", {"none", "int8", "auto"}, "none, int8 or auto",
      [o](const std::string &v) { o->actQuant = v; },
      "CPU: linears on q8/q4/q4m weights in groups of 32, or q8 per channel, "
      "quantise x per 32 values to int8 and use int8 dot products (as "
      "llama.cpp; faster, less exact); auto: "
      "int8 for a Hugging Face or GGUF model compiled for the CPU only, "
      "else none",
      o->actQuant);
  cl.value(
      "--quant-exclude",
      [o](const std::string &v) {
        for (size_t p = 0; p <= v.size();) {
          size_t c = std::min(v.find(',', p), v.size());
          if (c > p)
            o->quantExclude.push_back(v.substr(p, c - p));
          p = c + 1;
        }
      },
      "weights to keep as they are (names of params, source tensors or "
      "nodes, e.g. lm_head,*embed*; repeatable)",
      "", "GLOB,..");
}

/// --shape, --max-dim and the flags that say what to build.
void declareGraphFlags(CommandLine &cl, compiler::CompileOptions *o) {
  cl.value(
      "--target", [o](const std::string &v) { o->targets.push_back(v); },
      "targets to build for: cpu, cuda (= cuda:sm_80,cuda:sm_90) or "
      "cuda:sm_XX (sm_80 sm_86 sm_89 sm_90 sm_100 sm_120); comma-separated "
      "or repeated; the CPU plan is always included",
      "cpu", "TARGET,..");
  const std::string dimRange = std::to_string(kInt32Max);
  cl.value(
      "--shape",
      [o, dimRange](const std::string &v) {
        size_t eq = v.find('=');
        std::vector<int64_t> dims;
        if (eq == std::string::npos || eq == 0 ||
            !parseDims(v.substr(eq + 1), &dims))
          throw FlagError("--shape " + v + ": expected NAME=2x5x48 with each "
                          "dim an integer in 0.." + dimRange);
        o->inputShapes[v.substr(0, eq)] = dims;
      },
      "pin every dim of an input (repeatable)", "", "NAME=2x5x48");
  cl.value(
      "--max-dim",
      [o, dimRange](const std::string &v) {
        if (!validMaxDim(v))
          throw FlagError("--max-dim " + v + ": expected SYMBOL=N with N an "
                          "integer in 1.." + dimRange);
        o->maxDims.push_back(v);
      },
      "upper bound of a symbolic dim (repeatable; default " +
          std::to_string(o->defaultMaxDim) + ")",
      "", "SYMBOL=N");
  cl.value("--compile-to", &o->compileTo,
           "print the IR after PHASE, write no artifact (import, graph, "
           "fused, quantized, laid-out, plan)",
           "PHASE");
  cl.value("--dump-ir", &o->dumpIrDir, "write the IR of every phase to DIR",
           "DIR");
  cl.value(
      "--kv-cache-dtype,--kv-dtype",
      [o](const std::string &v) {
        if (v == "auto" || !parseKvCacheDtype(v, DType::F32, &o->kvDtype))
          throw FlagError("--kv-cache-dtype '" + v +
                          "' is not a KV-cache element type; known: "
                          "float32, bfloat16, int8 (a scale per token "
                          "and head), fp8");
      },
      "LLM: the KV cache's element type unless the engine is told otherwise "
      "(float32, bfloat16, int8 or fp8)",
      "float32", "DTYPE");
  for (auto [flag, field, help] :
       {std::tuple{"--fusion", &o->fusion, "fusion passes"},
        std::tuple{"--pack-weights", &o->packWeights,
                   "pack 16-bit linear weights into nk16 panels (measured "
                   "no faster end to end)"}})
    declareChoice(
        cl, flag, {"on", "off"}, "on or off",
        [field](const std::string &v) { *field = v == "on"; }, help,
        *field ? "on" : "off");
  declareChoice(
      cl, "--weights", {"embedded", "external"}, "embedded or external",
      [o](const std::string &v) { o->externalWeights = v == "external"; },
      "external: write no weight bytes, only the tensors of the model "
      "directory's safetensors each weight is made from and how; run the "
      "artifact with --weights DIR (Hugging Face directories only)",
      "embedded");
  cl.value(
      "--kv-layout",
      [o](const std::string &v) {
        if (!parseKvLayout(v, nullptr))
          throw FlagError("--kv-layout '" + v + "' is not a KV-cache layout; "
                          "known: " + knownKvLayouts());
        o->kvLayout = v;
      },
      "LLM: KV-cache block layout (cpu: block,head,token,dim; or "
      "block,token,head,dim)",
      "target's", "LAYOUT");
}
/// --list-onnx-ops: the importer's registry, for the node-test runner and
/// the generated docs/supported-ops.md (which must not be edited by hand).
int listOnnxOps() {
  llvm::json::Array ops;
  for (const compiler::SupportedOnnxOp &op : compiler::supportedOnnxOps())
    ops.push_back(llvm::json::Object{{"op", op.opType},
                                     {"domain", op.domain},
                                     {"min_opset", op.minOpset},
                                     {"max_opset", op.maxOpset}});
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(ops)))
               << "\n";
  llvm::outs().flush();
  return 0;
}

/// --list-hf-architectures / --list-gguf-architectures: the architectures
/// importHf / importGguf know.
int listArchitectures(const std::vector<std::string> &known) {
  llvm::json::Array names;
  for (const std::string &name : known)
    names.push_back(name);
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(names)))
               << "\n";
  llvm::outs().flush();
  return 0;
}

/// What compile was asked for besides a compile.
enum class Listing { None, OnnxOps, HfArchitectures, GgufArchitectures };

/// 0 to go on, -1 after --help, else the usage exit code (printed).
int parseCompileArgs(int argc, char **argv, compiler::CompileOptions *o,
                     Listing *listing) {
  CommandLine cl("compile", "Compiles an ONNX model, a GGUF file or a "
                            "Hugging Face directory into an artifact.");
  cl.positional("MODEL", &o->modelPath,
                "an ONNX file, a GGUF file or a Hugging Face directory");
  cl.value("-o,--output", &o->outputPath, "the artifact to write",
           "OUT.ingot");
  declareGraphFlags(cl, o);
  declareQuantFlags(cl, o);
  declareIntegerFlags(cl, o);
  auto list = [&](const char *flag, Listing what, const char *help) {
    cl.app().add_flag_callback(flag, [listing, what] { *listing = what; },
                               help);
  };
  list("--list-onnx-ops", Listing::OnnxOps,
       "print the supported ONNX ops as JSON and exit");
  list("--list-hf-architectures", Listing::HfArchitectures,
       "print the supported HF architectures as JSON and exit");
  list("--list-gguf-architectures", Listing::GgufArchitectures,
       "print the supported GGUF architectures as JSON and exit");
  o->targets.clear(); // --target adds to the list; none given: cpu
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc == 0 ? -1 : rc;
  if (o->targets.empty())
    o->targets.push_back("cpu");
  if (*listing != Listing::None)
    return 0;
  if (o->quantScheme == "asym" && o->quant != "int4")
    return cl.usageError("--quant-scheme asym needs --quant int4 (int8 and "
                         "fp8 are symmetric), got --quant " + o->quant);
  if (o->quantEmbed != "none" && o->quant == "none")
    return cl.usageError("--quant-embed " + o->quantEmbed +
                         " needs --quant int8, int4 or fp8");
  if (o->modelPath.empty() || (o->outputPath.empty() && o->compileTo.empty()))
    return cl.usageError("give a model and -o OUT.ingot (or --compile-to)");
  return 0;
}

} // namespace

int compileMain(int argc, char **argv) {
  compiler::CompileOptions options;
  Listing listing = Listing::None;
  if (int rc = parseCompileArgs(argc, argv, &options, &listing))
    return rc < 0 ? 0 : rc;
  switch (listing) {
  case Listing::OnnxOps:
    return listOnnxOps();
  case Listing::HfArchitectures:
    return listArchitectures(compiler::supportedHfArchitectures());
  case Listing::GgufArchitectures:
    return listArchitectures(compiler::supportedGgufArchitectures());
  case Listing::None:
    break;
  }
  if (!options.outputPath.empty()) {
    if (std::string e = compileOutputError(options.modelPath,
                                           options.outputPath);
        !e.empty()) {
      std::fprintf(stderr, "error: %s\n", e.c_str());
      return 1;
    }
  }
  Status status = compiler::compileModel(options, llvm::outs());
  llvm::outs().flush();
  if (!status) {
    std::fprintf(stderr, "error: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

} // namespace ingot::cli
