//===- CompileCommand.cpp - `ingot compile` -------------------------------===//
#include "CliChecks.h"
#include "CliNumbers.h"
#include "Commands.h"
#include "compiler/Compiler.h"
#include "compiler/gguf/GgufImporter.h"
#include "compiler/hf/HfImporter.h"
#include "compiler/onnx/OnnxImporter.h"
#include "ingot/KvCache.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace ingot::cli {
namespace {

void printCompileUsage() {
  std::fprintf(
      stderr,
      "usage: ingot compile MODEL -o OUT.ingot [options]\n"
      "  MODEL is an ONNX file, a GGUF file or a Hugging Face directory\n\n"
      "  --target cpu            target to build for (repeatable; default cpu)\n"
      "  --shape NAME=2x5x48     pin every dim of an input\n"
      "  --max-dim SYMBOL=N      upper bound of a symbolic dim (default 512)\n"
      "  --compile-to=PHASE      print the IR after PHASE, write no artifact\n"
      "                          (phases: import, graph, fused, quantized,\n"
      "                          laid-out, plan)\n"
      "  --fusion=on|off         fusion passes (default on; off for comparison)\n"
      "  --pack-weights=on|off   pack 16-bit linear weights into nk16 panels\n"
      "                          (default off: measured no faster end to end)\n"
      "  --quant none|int8|int4|fp8  linear weights in a quantised format\n"
      "                          (default none: a GGUF keeps its blocks;\n"
      "                          int8 = q8, int4 = q4m or q4)\n"
      "  --group-size N          values per scale along K (int8/int4 default\n"
      "                          32; 0 = per output channel, fp8's default)\n"
      "  --quant-scheme sym|asym int4: with a minimum (q4m, default) or\n"
      "                          symmetric (q4, as GGUF Q4_0)\n"
      "  --quant-lm-head same|int8|none  the lm_head's format (default: int8\n"
      "                          with --quant int4, else the same as the rest)\n"
      "  --quant-exclude GLOB,.. weights to keep as they are (names of params,\n"
      "                          source tensors or nodes, e.g. lm_head,*embed*)\n"
      "  --dump-ir=DIR           write the IR of every phase to DIR\n"
      "  --list-onnx-ops         print the supported ONNX ops as JSON and exit\n"
      "  --list-hf-architectures print the supported HF architectures as JSON\n"
      "  --list-gguf-architectures  the supported GGUF architectures as JSON\n\n"
      "LLMs (MODEL is a Hugging Face directory or a GGUF file):\n"
      "  --block-size N          KV-cache tokens per block (default 16; at most\n"
      "                          4096)\n"
      "  --max-tokens-per-step N tokens one engine step may process (default\n"
      "                          256; at most 1048576)\n"
      "  --max-seqs N            sequences one step may hold (default 64; at\n"
      "                          most 65536)\n"
      "  --max-context N         longest sequence (default: the model's; at\n"
      "                          most 16777216)\n"
      "  --kv-layout LAYOUT      KV-cache block layout (default: the target's;\n"
      "                          cpu: block,head,token,dim; or block,token,head,dim)\n");
}

/// The integer flags of compile: flag, range, where the value goes.
struct IntFlag {
  const char *name;
  int64_t min, max;
  int64_t compiler::CompileOptions::*field;
};
constexpr IntFlag kIntFlags[] = {
    {"--group-size", 0, int64_t(1) << 20, &compiler::CompileOptions::groupSize},
    {"--block-size", 1, kMaxBlockSize, &compiler::CompileOptions::blockSize},
    {"--max-tokens-per-step", 1, kMaxTokensPerStep,
     &compiler::CompileOptions::maxTokensPerStep},
    {"--max-seqs", 1, kMaxSeqs, &compiler::CompileOptions::maxSeqs},
    {"--max-context", 1, kMaxContext, &compiler::CompileOptions::maxContext},
};

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

/// An integer flag of kIntFlags at argv[*i] ("--flag N" or "--flag=N"):
/// 0 when `arg` is none of them, 1 when its value is stored in *options,
/// 2 when the value is bad (the error is printed).
int takeIntFlag(const std::string &arg, int argc, char **argv, int *i,
                compiler::CompileOptions *options) {
  for (const IntFlag &f : kIntFlags) {
    const std::string name = f.name;
    const char *text = nullptr;
    if (arg == name)
      text = *i + 1 < argc ? argv[++*i] : nullptr;
    else if (arg.compare(0, name.size() + 1, name + "=") == 0)
      text = arg.c_str() + name.size() + 1;
    else
      continue;
    int64_t n = 0;
    std::string error;
    if (!parseFlagInt(name, text, f.min, f.max, &n, &error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 2;
    }
    options->*f.field = n;
    return 1;
  }
  return 0;
}

} // namespace

int compileMain(int argc, char **argv) {
  compiler::CompileOptions options;
  options.targets.clear();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // Accept both "--flag=value" and "--flag value".
    auto value = [&](const char *flag, std::string *out) {
      size_t n = std::strlen(flag);
      if (arg.compare(0, n, flag) != 0)
        return false;
      if (arg.size() > n && arg[n] == '=') {
        *out = arg.substr(n + 1);
        return true;
      }
      if (arg.size() == n && i + 1 < argc) {
        *out = argv[++i];
        return true;
      }
      return false;
    };
    std::string v;
    if (int taken = takeIntFlag(arg, argc, argv, &i, &options)) {
      if (taken == 2)
        return 2;
    } else if (arg == "--help" || arg == "-h") {
      printCompileUsage();
      return 0;
    } else if (arg == "--list-onnx-ops") {
      return listOnnxOps();
    } else if (arg == "--list-hf-architectures") {
      return listArchitectures(compiler::supportedHfArchitectures());
    } else if (arg == "--list-gguf-architectures") {
      return listArchitectures(compiler::supportedGgufArchitectures());
    } else if (value("-o", &v) || value("--output", &v)) {
      options.outputPath = v;
    } else if (value("--target", &v)) {
      options.targets.push_back(v);
    } else if (value("--shape", &v)) {
      size_t eq = v.find('=');
      std::vector<int64_t> dims;
      if (eq == std::string::npos || eq == 0 ||
          !parseDims(v.substr(eq + 1), &dims)) {
        std::fprintf(stderr, "error: --shape %s: expected NAME=2x5x48 with "
                     "each dim an integer in 0..%lld\n", v.c_str(),
                     static_cast<long long>(kInt32Max));
        return 2;
      }
      options.inputShapes[v.substr(0, eq)] = dims;
    } else if (value("--max-dim", &v)) {
      if (!validMaxDim(v)) {
        std::fprintf(stderr, "error: --max-dim %s: expected SYMBOL=N with N an "
                     "integer in 1..%lld\n", v.c_str(),
                     static_cast<long long>(kInt32Max));
        return 2;
      }
      options.maxDims.push_back(v);
    } else if (value("--compile-to", &v)) {
      options.compileTo = v;
    } else if (value("--dump-ir", &v)) {
      options.dumpIrDir = v;
    } else if (value("--fusion", &v) || value("--pack-weights", &v)) {
      std::string flag = arg.substr(0, arg.find('='));
      if (v != "on" && v != "off") {
        std::fprintf(stderr, "error: %s takes on or off, got '%s'\n",
                     flag.c_str(), v.c_str());
        return 2;
      }
      (flag == "--fusion" ? options.fusion : options.packWeights) = v == "on";
    } else if (value("--quant", &v)) {
      if (v != "none" && v != "int8" && v != "int4" && v != "fp8") {
        std::fprintf(stderr, "error: --quant takes none, int8, int4 or fp8, "
                     "got '%s'\n", v.c_str());
        return 2;
      }
      options.quant = v;
    } else if (value("--quant-scheme", &v)) {
      if (v != "sym" && v != "asym") {
        std::fprintf(stderr, "error: --quant-scheme takes sym or asym, got "
                     "'%s'\n", v.c_str());
        return 2;
      }
      options.quantScheme = v;
    } else if (value("--quant-lm-head", &v)) {
      if (v != "same" && v != "int8" && v != "none") {
        std::fprintf(stderr, "error: --quant-lm-head takes same, int8 or none, "
                     "got '%s'\n", v.c_str());
        return 2;
      }
      options.quantLmHead = v;
    } else if (value("--quant-exclude", &v)) {
      for (size_t p = 0; p <= v.size();) {
        size_t c = std::min(v.find(',', p), v.size());
        if (c > p)
          options.quantExclude.push_back(v.substr(p, c - p));
        p = c + 1;
      }
    } else if (value("--kv-layout", &v)) {
      if (!parseKvLayout(v, nullptr)) {
        std::fprintf(stderr, "error: --kv-layout '%s' is not a KV-cache "
                     "layout; known: %s\n", v.c_str(), knownKvLayouts().c_str());
        return 2;
      }
      options.kvLayout = v;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "error: unknown option '%s'\n\n", arg.c_str());
      printCompileUsage();
      return 2;
    } else if (options.modelPath.empty()) {
      options.modelPath = arg;
    } else {
      std::fprintf(stderr, "error: more than one model given ('%s', '%s')\n",
                   options.modelPath.c_str(), arg.c_str());
      return 2;
    }
  }
  if (options.quantScheme == "asym" && options.quant != "int4") {
    std::fprintf(stderr, "error: --quant-scheme asym needs --quant int4 (int8 "
                 "and fp8 are symmetric), got --quant %s\n",
                 options.quant.c_str());
    return 2;
  }
  if (options.targets.empty())
    options.targets.push_back("cpu");
  if (options.modelPath.empty() ||
      (options.outputPath.empty() && options.compileTo.empty())) {
    printCompileUsage();
    return 2;
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
