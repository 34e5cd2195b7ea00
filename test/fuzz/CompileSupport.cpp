//===- CompileSupport.cpp - Compiling fuzzed models -----------------------===//
#include "CompileSupport.h"

#include "FuzzSupport.h"
#include "compiler/Compiler.h"

#include "llvm/Support/raw_ostream.h"

namespace ingot::fuzz {

void compileAndRun(const std::string &modelPath) {
  compiler::CompileOptions options;
  options.modelPath = modelPath;
  options.outputPath = scratchDir() + "/out.ingot";
  // Small engine limits keep a valid model's arena and KV cache small, so
  // each execution stays in milliseconds.
  options.defaultMaxDim = 16;
  options.maxTokensPerStep = 16;
  options.maxSeqs = 2;
  options.maxContext = 32;
  if (!report("compile", compiler::compileModel(options, llvm::nulls())))
    return;
  exerciseArtifact(options.outputPath, nullptr, 0);
}

} // namespace ingot::fuzz
