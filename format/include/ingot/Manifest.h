//===- Manifest.h - The artifact's manifest as plain C++ data ---*- C++ -*-===//
//
// The manifest describes everything in an artifact except the bytes of the
// weights and code: model I/O, the tensor table, the buffers of the step plan
// and the sequence of kernel invocations. The compiler fills one in and the
// artifact writer encodes it as a FlatBuffer (schema, whose defaults match
// this struct's: format/schema/manifest.fbs); the runtime verifies it in
// place, decodes it once into this struct and validates that. Decoding is
// about a millisecond for SmolLM2, against 30 ms to build its tokenizer
// (docs/artifact-format.md), so nothing reads the FlatBuffer in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ingot {

/// Buffer id meaning "optional operand not given" in Step::inputs.
constexpr uint32_t kNoBuffer = 0xffffffffu;

/// How a tensor kept outside the artifact (--weights=external) is made at
/// load: the source tensors `parts` name ("KEY", or a slice of one:
/// "KEY#rows=A:B", "KEY#cols=A:B", "KEY#plus1"; ingot/SourceSlice.h),
/// concatenated along `concatAxis` into `sourceType` values, then quantised
/// and packed as the entry's dtype and layout say (ingot/ParamProducer.h).
struct WeightTransform {
  std::vector<std::string> parts;
  int64_t concatAxis = 0;
  DType sourceType = DType::F32;
};

/// One tensor stored in the weight section (weights and small constants).
struct TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string layout = "row-major";
  uint64_t offset = 0; // from the start of the weight section, 64-B aligned
  uint64_t bytes = 0;
  /// Quantised dtypes only (ingot/Quant.h): values per block along the
  /// last dim; shape is then the logical [N, K] and bytes quantTensorBytes.
  int64_t groupSize = 0;
  /// Made at load from the external weights rather than stored here; its
  /// offset is then in the load-time weight space, past the section.
  bool external = false;
  WeightTransform transform; // external tensors only
};

/// A tensor of the source safetensors files that a transform reads, with
/// the dtype and shape the compiler saw.
struct SourceTensor {
  std::string name;
  uint32_t file = 0; // index into ExternalWeights::files
  std::string dtype; // safetensors' name: "F32", "BF16", ...
  std::vector<int64_t> shape;
};

/// Weights kept outside the artifact: the files (names inside the
/// directory given at load) and every source tensor the transforms read.
/// The weight space at load is the weight section followed by the
/// external tensors, `spaceBytes` in all.
struct ExternalWeights {
  std::vector<std::string> files;
  std::vector<SourceTensor> tensors; // sorted by name
  uint64_t spaceBytes = 0;
  bool empty() const { return files.empty(); }
};

/// A dimension of a model input/output: a fixed size or a named symbol.
struct Dim {
  int64_t size = -1;  // -1 when symbolic
  std::string symbol; // non-empty when symbolic
};

enum class BufferKind : uint8_t {
  Input = 1, // bound to a model input at run time (ioIndex)
  Param = 2, // a tensor in the weight section (tensorIndex), read-only
  Arena = 3, // a slice of the activation arena (arenaOffset, maxBytes)
  // Sized at run time: a result whose size depends on tensor values (Range,
  // Tile, Resize with run-time scales), so no compiled bound exists. The
  // runtime allocates it when its kernel sets the shape; maxShape holds -1
  // for each unbounded dim and maxBytes is 0.
  Dynamic = 4,
};

/// A buffer of the step plan. Runtime shapes are set by the producing kernel;
/// maxShape is the compiled upper bound the arena slice was sized for (-1
/// for a Dynamic buffer's unbounded dims).
struct Buffer {
  uint32_t id = 0; // equals its index in Manifest::buffers
  BufferKind kind = BufferKind::Arena;
  DType dtype = DType::F32;
  uint32_t rank = 0;
  std::vector<int64_t> maxShape;
  uint64_t maxBytes = 0;
  uint64_t arenaOffset = 0; // Arena only, 64-B aligned
  int32_t tensorIndex = -1; // Param only
  int32_t ioIndex = -1;     // Input only
  std::string name;         // for messages: the graph value it holds
};

/// A static kernel argument.
struct Attr {
  enum class Kind : uint8_t {
    Int = 1,
    Float = 2,
    Ints = 3,
    Floats = 4,
    Str = 5
  };
  std::string name;
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string s;
};

/// One kernel invocation of the plan.
struct Step {
  std::string kernel;            // e.g. "matmul"; see docs/kernels.md
  std::vector<uint32_t> inputs;  // buffer ids, kNoBuffer for absent optionals
  std::vector<uint32_t> outputs; // buffer ids
  std::vector<Attr> attrs;
  std::string origin; // source node name, for messages
};

/// A model input or output.
struct IoSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<Dim> dims;
  uint32_t buffer = 0;
};

struct SymbolBound {
  std::string name;
  int64_t max = 0;
};

struct MemorySummary {
  uint64_t weightsBytes = 0;
  uint64_t arenaBytes = 0;
  uint64_t arenaLowerBoundBytes = 0; // peak of simultaneously live bytes
  uint64_t arenaNaiveBytes = 0;      // sum of all arena buffers, no reuse
  uint64_t kvCacheBytes = 0;
  uint64_t overheadBytes = 0; // manifest + plan tables, estimated
};

/// Geometry of a decoder LLM's paged KV cache and the limits the step plan
/// was compiled for. Present only for artifacts compiled from an LLM.
struct LlmConfig {
  std::string architecture; // e.g. "LlamaForCausalLM"
  int64_t numLayers = 0;
  int64_t hiddenSize = 0;
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0;
  int64_t vocabSize = 0;
  int64_t maxPositions = 0;     // model context length
  int64_t blockSize = 16;       // KV-cache tokens per block
  int64_t maxTokensPerStep = 0; // bound of symbol "tokens"
  int64_t maxSeqs = 0;          // bound of symbol "seqs"
  int64_t maxBlocksPerSeq = 0;  // bound of symbol "blocks"
  DType kvDtype = DType::F32;
  std::string kvLayout = "block,token,head,dim"; // per layer, K and V apart

  /// Tokens one sequence may hold: the model's positions and its block
  /// table, whichever is fewer.
  int64_t contextLength() const {
    const int64_t blocks = maxBlocksPerSeq * blockSize;
    return maxPositions > 0 && maxPositions < blocks ? maxPositions : blocks;
  }
};

/// A BPE tokenizer of one of two kinds (`model`):
///  - "byte_level_bpe" (GPT-2 / Llama-3 / Qwen2 / SmolLM2): text is split by
///    a regex-like pattern and each piece's bytes are merged;
///  - "sentencepiece_bpe" (Llama-2 / Mistral / TinyLlama / Gemma): spaces
///    become U+2581 "▁", the text's Unicode characters are merged, and
///    characters outside the vocabulary become <0xXX> byte tokens.
/// Artifacts from before `model` existed are byte-level.
struct TokenizerData {
  std::string model = "byte_level_bpe";
  /// Token strings by id: byte-level models in the byte-level alphabet of
  /// tokenizer.json (bytes mapped to printable code points), SentencePiece
  /// models as UTF-8 text with "▁" for spaces; "" for unused ids.
  std::vector<std::string> vocab;
  /// Merge rules in priority order, as pairs of token ids (left, right);
  /// the merged token's id is looked up in the vocab.
  std::vector<std::pair<int32_t, int32_t>> merges;
  /// sentencepiece_bpe without merges (GGUF "llama" vocabularies): a score
  /// per token; the adjacent pair whose concatenation is a token with the
  /// highest score merges first (SentencePiece's and llama.cpp's rule).
  std::vector<float> scores;
  /// sentencepiece_bpe: a character outside the vocabulary becomes the
  /// tokens <0xXX> of its UTF-8 bytes (when all exist), else `unkId`.
  bool byteFallback = false;
  int32_t unkId = -1;   // -1: unknown characters are dropped
  bool fuseUnk = false; // a run of unknown characters gives one unkId
  struct AddedToken {
    int32_t id = 0;
    std::string content; // literal text, not byte-level encoded
    bool special = false;
  };
  std::vector<AddedToken> addedTokens;
  /// byte_level_bpe: gpt2|llama3|qwen2|gpt2-digits [+nfc][+ignore_merges];
  /// sentencepiece_bpe: metaspace[+prepend|+first|+always][+split]
  /// [+ignore_merges] (PreTokenizer.h, SentencePiece.h).
  std::string pretokenizer = "gpt2";
  /// byte_level_bpe: "" (ByteLevel); sentencepiece_bpe: "metaspace"
  /// [+byte_fallback][+strip_space|+strip_first_token] (SentencePiece.h).
  std::string decoder;
  int32_t bosId = -1;
  int32_t eosId = -1;
  bool addBos = false;
  /// "chatml", "llama3" or "" (none recognised); "chatml:TEXT" is ChatML
  /// whose template inserts TEXT as the system message when none is given.
  std::string chatTemplate;
};

/// Sampling defaults from generation_config.json.
struct GenerationDefaults {
  double temperature = 1.0;
  int64_t topK = 0; // 0 = off
  double topP = 1.0;
  std::vector<int32_t> eosIds; // all ids that stop generation
  int64_t maxNewTokens = 256;
};

/// How the runtime computes one argument of a generated GPU kernel when it
/// launches it (codegen/gpu/ElementwiseKernel.h lays the arguments out).
struct GpuArg {
  enum class Kind : uint8_t {
    Pointer = 1,         // device address of the operand's buffer
    Numel = 2,           // element count of the operand (i64)
    Dim = 3,             // size of the operand's `axis` (i64)
    BroadcastStride = 4, // element stride of input `operand` along the
                         // first output's `axis`, 0 where broadcast (i64)
    KvKeys = 5,          // device address of layer `axis`'s key cache
    KvValues = 6,        // device address of layer `axis`'s value cache
  };
  Kind kind = Kind::Pointer;
  uint32_t operand = 0; // the step's inputs, then its outputs
  uint32_t axis = 0;
};

/// One dimension of a launch grid: `extent` blocks when `operand` is
/// kGridConstant, else ceil(numel(operand) / divisor) blocks.
struct GpuGridDim {
  static constexpr uint32_t kGridConstant = 0xffffffffu;
  uint32_t operand = kGridConstant; // the step's inputs, then its outputs
  uint64_t divisor = 1;
  uint32_t extent = 1;
  bool operator==(const GpuGridDim &) const = default;
};

/// A GPU kernel that computes (part of) one step, and its launch. Without
/// `grid`, grid.x = ceil(numel(operand gridOperand) / blockX); with it,
/// `grid` gives x, then y, then z (1 to 3 dims, missing ones are 1). Block
/// y, z are 1. A step computed by several kernels (paged attention writes
/// the cache, then reads it) has consecutive entries, launched in order.
struct GpuKernel {
  uint32_t step = 0;
  std::string symbol;
  uint32_t blockX = 256;
  uint32_t gridOperand = 0;
  uint32_t sharedBytes = 0;
  std::vector<GpuArg> args;
  std::vector<GpuGridDim> grid;
};

/// One code object in a target's code section ("code.<target>").
struct CodeObject {
  enum class Format : uint8_t { Cubin = 1, Ptx = 2 };
  std::string arch; // "sm_90"
  Format format = Format::Cubin;
  uint64_t offset = 0; // from the start of the code section
  uint64_t bytes = 0;
};

/// A GPU target family ("cuda"): its code objects, one cubin per
/// architecture (plus PTX of the newest, for JIT on newer GPUs: one object
/// per source the kernels came from, all loaded together), and the kernels
/// of each step it covers, launched the same way on every architecture.
struct GpuTarget {
  std::string name;
  std::vector<CodeObject> objects;
  std::vector<GpuKernel> kernels; // by ascending step
};

/// The format version a new Manifest says it has; ArtifactWriter.h's
/// kArtifactFormatVersion is this number. 4: "q16" q8 values are stored
/// + 128 (WeightLayout.h), which a format-3 reader would take as they are.
inline constexpr uint32_t kManifestFormatVersion = 4;

struct Manifest {
  uint32_t formatVersion = kManifestFormatVersion;
  std::string compilerVersion;
  std::string modelName;
  std::vector<std::string> targets; // e.g. {"cpu"}
  std::vector<TensorEntry> tensors;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<IoSpec> inputs;
  std::vector<IoSpec> outputs;
  std::vector<SymbolBound> symbols;
  MemorySummary memory;
  /// LLM artifacts only (hasLlm): KV cache geometry, tokenizer, defaults.
  bool hasLlm = false;
  LlmConfig llm;
  TokenizerData tokenizer;
  GenerationDefaults generation;
  std::vector<GpuTarget> gpuTargets;
  ExternalWeights externalWeights; // empty: every weight is in the file
};

/// Whether arena buffer `in`, an input of concat step `step`, lies in its
/// slab of the step's output, where the memory planner put it for its
/// producer to write there: at the output's offset plus the bytes of the
/// inputs before it, every input of the output's element size, their bytes
/// summing to the output's (ManifestValidateMemory.cpp).
bool concatHoldsInputInPlace(const Manifest &m, size_t step, uint32_t in);

} // namespace ingot
