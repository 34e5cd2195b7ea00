//===- HfImporter.h - Hugging Face decoder LLMs into ingot ------*- C++ -*-===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"
#include "ingot/WeightSource.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace ingot::compiler {

struct HfImportOptions {
  int64_t blockSize = 16;          // --block-size
  int64_t maxTokensPerStep = 256;  // bound of symbol "tokens"
  int64_t maxSeqs = 64;            // bound of symbol "seqs"
  int64_t maxContext = 0;          // 0 = the model's max_position_embeddings
  std::string target = "cpu";      // picks the KV layout unless given
  std::string kvLayout;            // --kv-layout; empty: the target's choice
  DType kvDtype = DType::F32;      // --kv-cache-dtype
};

/// What an LLM import yields besides the graph.
struct HfModelInfo {
  LlmConfig llm;                  // maxBlocksPerSeq etc. filled in
  TokenizerData tokenizer;
  GenerationDefaults generation;
  /// --max-dim entries for the plan phase: tokens, seqs, blocks.
  std::vector<std::string> maxDims;
};

/// Reads DIR/config.json, the safetensors weights (model.safetensors or the
/// shards named by model.safetensors.index.json), tokenizer.json and, when
/// present, tokenizer_config.json / generation_config.json, and fills
/// `module` with `func.func @main`, one engine step of the model:
///   inputs  tokens [tokens] i64, positions [tokens] i64,
///           slot_mapping [tokens] i64, block_tables [seqs, blocks] i32,
///           query_ends [seqs] i64, logits_indices [seqs] i64
///   output  logits [seqs, vocab] f32 (rows of the tokens at logits_indices)
/// (argument attributes `ingot.name` / `ingot.dims` as for ONNX). Weights
/// are `ingot.param`s named after their safetensors keys, possibly with a
/// "#rows=A:B" or "#cols=A:B" suffix selecting a slice of a fused tensor.
/// Errors name the file and the key or tensor.
Status importHf(const std::string &dir, const HfImportOptions &options,
                mlir::ModuleOp module, std::unique_ptr<WeightSource> *weights,
                HfModelInfo *info);

/// The KV-cache layout an artifact for `target` gets without --kv-layout.
std::string defaultKvLayout(const std::string &target);

/// Architectures the registry knows, for messages and the support table.
std::vector<std::string> supportedHfArchitectures();

} // namespace ingot::compiler
