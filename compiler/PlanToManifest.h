//===- PlanToManifest.h - Serialise a planned module ------------*- C++ -*-===//
#pragma once

#include "ingot/ArtifactWriter.h"
#include "ingot/WeightSource.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace ingot::compiler {

struct ArtifactInfo {
  std::string modelName;
  std::vector<std::string> targets; // "cpu", "cuda:sm_90", ...
  /// GPU target families ("cuda") and the bytes of each one's code section.
  std::vector<GpuTarget> gpuTargets;
  std::vector<std::vector<uint8_t>> gpuCode;
  /// LLM artifacts: KV-cache geometry, tokenizer and sampling defaults.
  const LlmConfig *llm = nullptr;
  const TokenizerData *tokenizer = nullptr;
  const GenerationDefaults *generation = nullptr;
  /// --weights=external: record each weight's sources and transform
  /// instead of writing its bytes (the weight source must locate() them).
  bool externalWeights = false;
  std::string modelPath; // for messages
};

/// Writes the artifact for a module holding one planned `func.func @main`
/// (after ingot-plan-memory): manifest from the IR, weights streamed from
/// `weights`, atomically to `path`.
Status writeArtifact(mlir::ModuleOp module, WeightSource &weights,
                     const ArtifactInfo &info, const std::string &path);

} // namespace ingot::compiler
