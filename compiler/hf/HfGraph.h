//===- HfGraph.h - State shared by the HF architecture builders -*- C++ -*-===//
//
// Private to the Hugging Face importer. HfGraph is what an architecture
// builder sees: the step's inputs, checked access to the weights (each
// `ingot.param` is validated against the safetensors header: present, a
// float dtype, the shape the config implies) and helpers that create ops
// with OpTy::create and set their result types from the shared shape rules,
// as the ONNX importer does. The first error is recorded; later helpers then
// return null values, so builders check `failed()` once per layer instead of
// after every op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/hf/HfConfig.h"
#include "compiler/hf/HfImporter.h"
#include "compiler/hf/Safetensors.h"
#include "dialects/Ingot/IngotDialect.h"
#include "ingot/Manifest.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace ingot::compiler::hf {

/// The arguments of `@main`, one engine step.
struct StepInputs {
  mlir::Value tokens;        // [tokens] i64
  mlir::Value positions;     // [tokens] i64
  mlir::Value slotMapping;   // [tokens] i64
  mlir::Value blockTables;   // [seqs, blocks] i32
  mlir::Value queryEnds;     // [seqs] i64
  mlir::Value logitsIndices; // [seqs] i64
};

class HfGraph {
public:
  HfGraph(mlir::OpBuilder &builder, const TensorCatalog &store,
          const HfJson &config, StepInputs inputs)
      : b_(builder), store_(store), config_(config), inputs_(inputs) {}

  mlir::OpBuilder &builder() { return b_; }
  mlir::Type f32() { return b_.getF32Type(); }
  const HfJson &config() const { return config_; }
  const StepInputs &inputs() const { return inputs_; }

  /// Whether the weights hold `key`.
  bool hasTensor(llvm::StringRef key) const {
    return store_.lookup(key, nullptr) != nullptr;
  }
  /// `ingot.param "key"` of a tensor that must have `shape`.
  mlir::Value param(const std::string &key, llvm::ArrayRef<int64_t> shape);
  /// `ingot.param "key#rows=A:B"`: rows [A, B) of a 2-D tensor, or elements
  /// [A, B) of a 1-D one, whose full shape must be `shape`.
  mlir::Value paramRows(const std::string &key, llvm::ArrayRef<int64_t> shape,
                        int64_t begin, int64_t end);
  /// `ingot.param "key#plus1"`: 1 + the tensor, as f32 (Gemma's norms
  /// multiply by 1 + weight, computed in f32 by transformers).
  mlir::Value paramPlusOne(const std::string &key,
                           llvm::ArrayRef<int64_t> shape);
  /// `ingot.param "key#cols=A:B"`: columns [A, B) of a 2-D tensor.
  mlir::Value paramCols(const std::string &key, llvm::ArrayRef<int64_t> shape,
                        int64_t begin, int64_t end);

  /// Creates `OpTy` named `name`, infers its result shape and verifies it.
  template <typename OpTy, typename... Args>
  mlir::Value build(llvm::StringRef name, mlir::Type elementType,
                    Args &&...args) {
    if (failed())
      return nullptr;
    auto op = OpTy::create(b_, loc(name),
                           mlir::RankedTensorType::get({}, elementType),
                           std::forward<Args>(args)...);
    return finish(op.getOperation(), name);
  }

  // Op helpers; each returns null once an error has been recorded.
  mlir::Value linear(llvm::StringRef name, mlir::Value x, mlir::Value w,
                     mlir::Value bias, llvm::StringRef layout);
  mlir::Value rmsNorm(llvm::StringRef name, mlir::Value x, mlir::Value w,
                      double epsilon);
  /// layer_norm over the last dim; widens f16/bf16 scale and bias first,
  /// since the kernel takes them in the activations' f32.
  mlir::Value layerNorm(llvm::StringRef name, mlir::Value x, mlir::Value w,
                        mlir::Value bias, double epsilon);
  /// rms_norm of each `heads` slice of the last dim of x [T, heads·D] with
  /// weight [D], as [T, heads, D] and back (Qwen3's q/k norms).
  mlir::Value headRmsNorm(llvm::StringRef name, mlir::Value x, mlir::Value w,
                          int64_t heads, double epsilon);
  mlir::Value add(llvm::StringRef name, mlir::Value a, mlir::Value b);
  /// paged_attention over the step's cache inputs; `softcap` 0 = none.
  mlir::Value pagedAttention(llvm::StringRef name, mlir::Value q,
                             mlir::Value k, mlir::Value v, int64_t layer,
                             int64_t heads, int64_t kvHeads, int64_t headDim,
                             double scale, int64_t window,
                             double softcap = 0.0);
  /// x · factor (an f32 scalar constant).
  mlir::Value scale(llvm::StringRef name, mlir::Value x, double factor);
  /// cap · tanh(x / cap): Gemma's logit soft-capping.
  mlir::Value softcap(llvm::StringRef name, mlir::Value x, double cap);
  /// Rows of `table` at `indices`, widened to f32 when stored narrower.
  mlir::Value embed(llvm::StringRef name, mlir::Value table,
                    mlir::Value indices);
  /// Rows of the activations `x` at `indices` (ingot.gather axis 0).
  mlir::Value gatherRows(llvm::StringRef name, mlir::Value x,
                         mlir::Value indices);
  /// `v` as f32: itself, or an ingot.cast of it.
  mlir::Value toF32(llvm::StringRef name, mlir::Value v);

  /// Marks `key` as deliberately unread (a stored lm_head.weight that
  /// tie_word_embeddings replaces by the embedding, as transformers does).
  void ignoreTensor(const std::string &key) { used_.insert(key); }
  /// An error naming the first tensor of the weights the graph did not
  /// read: one of a layer past `layers`, or any other. Buffers transformers
  /// recomputes and never reads from a checkpoint (rotary inv_freq, GPT-2's
  /// causal-mask attn.bias) are ignored.
  Status checkAllTensorsUsed(const std::string &arch, int64_t layers) const;

  /// Records the first error; later helpers return null.
  void fail(std::string message);
  bool failed() const { return error_.has_value(); }
  Status status() const {
    return error_ ? Status::error(*error_) : Status::ok();
  }
  /// The last MLIR diagnostic (verifier messages), set by the driver's
  /// diagnostic handler.
  void setDiagnostic(std::string message) { diagnostic_ = std::move(message); }

  mlir::Location loc(llvm::StringRef name) {
    return mlir::NameLoc::get(b_.getStringAttr(name));
  }

private:
  /// The safetensors entry of `key`, checked to be a float weight of
  /// `shape`; null (with the error recorded) otherwise.
  const SafetensorsTensor *weight(const std::string &key,
                                  llvm::ArrayRef<int64_t> shape);
  mlir::Value makeParam(const std::string &name, const SafetensorsTensor &t,
                        llvm::ArrayRef<int64_t> shape);
  mlir::Value finish(mlir::Operation *op, llvm::StringRef name);

  mlir::OpBuilder &b_;
  const TensorCatalog &store_;
  const HfJson &config_;
  const StepInputs inputs_;
  std::map<std::string, mlir::Value> params_;
  std::set<std::string> used_; // tensor keys the graph reads
  std::optional<std::string> error_;
  std::string diagnostic_;
};

/// Builds one architecture's step into the current function body: returns
/// the logits value [seqs, vocab] f32 and fills the model-specific fields of
/// `llm` (layers, hidden, heads, kv heads, head_dim, vocab, maxPositions).
using ArchitectureBuilder = Status (*)(HfGraph &g, const std::string &arch,
                                       LlmConfig &llm, mlir::Value &logits);

/// Builds `func.func @main` (one engine step, as importHf documents it) of
/// the architecture `config` names into `module`, reading tensor dtypes and
/// shapes from `tensors`; fills `llm`'s model fields and the KV-cache
/// geometry from `options`. On error nothing is left in the module.
Status importStep(const HfJson &config, const TensorCatalog &tensors,
                  const HfImportOptions &options, mlir::ModuleOp module,
                  LlmConfig &llm);
/// --max-dim bounds for the plan phase: tokens, seqs, blocks.
std::vector<std::string> stepMaxDims(const LlmConfig &llm);

Status buildLlamaFamily(HfGraph &g, const std::string &arch, LlmConfig &llm,
                        mlir::Value &logits);
Status buildGemma(HfGraph &g, const std::string &arch, LlmConfig &llm,
                  mlir::Value &logits);
Status buildGpt2(HfGraph &g, const std::string &arch, LlmConfig &llm,
                 mlir::Value &logits);

} // namespace ingot::compiler::hf
