//===- Compiler.h - The compiler's entry point for tools --------*- C++ -*-===//
#pragma once

#include "ingot/DType.h"
#include "ingot/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace ingot::compiler {

/// Named phases in pipeline order; `--compile-to` stops after one.
const std::vector<std::string> &phaseNames();

struct CompileOptions {
  std::string modelPath;
  std::string outputPath;              // the artifact; unused with compileTo
  std::vector<std::string> targets = {"cpu"};
  std::map<std::string, std::vector<int64_t>> inputShapes; // --shape
  std::vector<std::string> maxDims;    // --max-dim SYMBOL=N
  int64_t defaultMaxDim = 512;
  std::string compileTo;               // a phase name, or empty for all
  std::string dumpIrDir;               // writes NN-<phase>.mlir per phase
  bool fusion = true;                  // --fusion=on|off: every fusion pass
  // --pack-weights=on|off. Off by default: on the AVX-512 CPU it was
  // measured on, SmolLM2 bf16 decoded no faster packed and prefilled 17%
  // slower (see the ingot-pack-weights description).
  bool packWeights = false;
  // --weights=external: the artifact holds no weight bytes, only where each
  // weight comes from in the model's safetensors and how it is transformed;
  // the runtime makes the bytes at load (--weights DIR).
  bool externalWeights = false;
  // --quant none|int8|int4|fp8, --group-size (-1: the mode's default,
  // 0: per channel), --quant-scheme sym|asym, --quant-exclude GLOB,...
  std::string quant = "none";
  int64_t groupSize = -1;
  std::string quantScheme; // empty: the mode's default (int4: asym)
  std::vector<std::string> quantExclude;
  std::string quantLmHead; // same|int8|none; empty: int4 -> int8, else same
  std::string quantEmbed = "none"; // none|same|int8: embedding tables
  // --act-quant none|int8|auto: int8 packs q8/q4/q4m weights in groups of
  // 32 as "q16" and their linears quantise x per 32-value block (CPU only);
  // auto is int8 for an LLM compiled for the CPU alone, else none. The
  // default stays exact: int8 moves SmolLM2's logits by ~0.3, enough to
  // flip near-ties (its answer to "the capital of France" among them).
  std::string actQuant = "none";
  // Hugging Face directories only: the engine-step limits.
  int64_t blockSize = 16;
  int64_t maxTokensPerStep = 256;
  int64_t maxSeqs = 64;
  int64_t maxContext = 0; // 0 = the model's max_position_embeddings
  std::string kvLayout;   // --kv-layout; empty: the target's choice
  // --kv-cache-dtype: what the engine's KV cache holds unless its own
  // --kv-cache-dtype says otherwise (float32, bfloat16, int8 or fp8 e4m3).
  DType kvDtype = DType::F32;
};

/// Runs the pipeline. With compileTo set, prints that phase's IR to `irOut`
/// and writes no artifact. Errors name the model file and the node.
Status compileModel(const CompileOptions &options, llvm::raw_ostream &irOut);

} // namespace ingot::compiler
