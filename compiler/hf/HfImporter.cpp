//===- HfImporter.cpp - Hugging Face decoder LLMs into ingot --------------===//
//
// The driver: reads config.json, picks the architecture's builder from the
// registry, validates the safetensors headers, creates `func.func @main`
// with the step inputs, lets the builder emit the layers, and fills the
// HfModelInfo (KV-cache geometry, tokenizer, generation defaults, symbol
// bounds) the rest of the pipeline needs.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/HfImporter.h"
#include "compiler/hf/HfGraph.h"
#include "compiler/hf/HfWeights.h"
#include "compiler/hf/QuantizedCheckpoint.h"
#include "compiler/hf/TokenizerImport.h"
#include "ingot/KvLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>

using namespace mlir;

namespace ingot::compiler {
namespace {

using namespace hf;

struct Architecture {
  const char *name;
  ArchitectureBuilder build;
};

/// The registry; the order is the order of the support table.
constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", buildLlamaFamily},
    {"Qwen2ForCausalLM", buildLlamaFamily},
    {"Qwen3ForCausalLM", buildLlamaFamily},
    {"Gemma2ForCausalLM", buildGemma},
    {"Gemma3ForCausalLM", buildGemma},
    {"MistralForCausalLM", buildLlamaFamily},
    {"Phi3ForCausalLM", buildLlamaFamily},
    {"GPT2LMHeadModel", buildGpt2},
};

std::string knownList() {
  std::string s;
  for (const Architecture &a : kArchitectures)
    s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

Status checkOptions(const HfImportOptions &o) {
  auto positive = [](int64_t v, const char *what) {
    return v >= 1 ? Status::ok()
                  : Status::error(std::string(what) + " must be >= 1, got " +
                                  std::to_string(v));
  };
  if (Status s = positive(o.blockSize, "--block-size"); !s)
    return s;
  if (Status s = positive(o.maxTokensPerStep, "the bound of 'tokens'"); !s)
    return s;
  if (Status s = positive(o.maxSeqs, "the bound of 'seqs'"); !s)
    return s;
  if (o.maxContext < 0)
    return Status::error("--max-context must be >= 0 (0 = the model's), got " +
                         std::to_string(o.maxContext));
  if (!o.kvLayout.empty() && !parseKvLayout(o.kvLayout, nullptr))
    return Status::error("--kv-layout '" + o.kvLayout +
                         "' is not a KV-cache layout; known: " +
                         knownKvLayouts());
  return Status::ok();
}

/// The step inputs: name, shape, element type and dim symbols.
struct InputSpec {
  const char *name;
  int rank;
  bool i32;
  const char *dims[2];
};
constexpr InputSpec kInputs[] = {
    {"tokens", 1, false, {"tokens"}},
    {"positions", 1, false, {"tokens"}},
    {"slot_mapping", 1, false, {"tokens"}},
    {"block_tables", 2, true, {"seqs", "blocks"}},
    {"query_ends", 1, false, {"seqs"}},
    {"logits_indices", 1, false, {"seqs"}},
};

/// Creates `@main` taking the step inputs, with `ingot.name`/`ingot.dims`
/// argument attributes as the ONNX importer sets them.
func::FuncOp createMain(OpBuilder &b, Location loc, StepInputs &inputs) {
  SmallVector<Type> types;
  for (const InputSpec &in : kInputs)
    types.push_back(RankedTensorType::get(
        SmallVector<int64_t>(in.rank, ShapedType::kDynamic),
        in.i32 ? b.getI32Type() : b.getI64Type()));
  auto func =
      func::FuncOp::create(b, loc, "main", b.getFunctionType(types, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, in] : llvm::enumerate(kInputs)) {
    func.setArgAttr(i, "ingot.name", b.getStringAttr(in.name));
    SmallVector<Attribute> dims;
    for (int d = 0; d < in.rank; ++d)
      dims.push_back(b.getStringAttr(in.dims[d]));
    func.setArgAttr(i, "ingot.dims", b.getArrayAttr(dims));
    body->getArgument(i).setLoc(NameLoc::get(b.getStringAttr(in.name)));
  }
  auto arg = [&](int i) { return body->getArgument(i); };
  inputs = {arg(0), arg(1), arg(2), arg(3), arg(4), arg(5)};
  return func;
}

/// bos_token_id, eos_token_id and pad_token_id of `json` are ids of the
/// model's vocabulary (checked even where ingot does not use them: a wrong
/// one says the file belongs to another model); eos_token_id's into `eos`.
Status checkTokenIds(const HfJson &json, const HfJson &config,
                     const LlmConfig &llm, std::vector<int64_t> *eos) {
  const std::string vocab =
      "vocab_size " + std::to_string(llm.vocabSize) + " of " + config.path();
  std::vector<int64_t> ids;
  for (const char *key : {"bos_token_id", "pad_token_id"})
    if (Status s = json.getTokenIds(key, llm.vocabSize, vocab, ids); !s)
      return s;
  if (Status s = json.getTokenIds("eos_token_id", llm.vocabSize, vocab, ids);
      !s)
    return s;
  if (eos)
    *eos = std::move(ids);
  return Status::ok();
}

/// Sampling defaults and stop ids: generation_config.json when present,
/// else config.json's eos_token_id, else the tokenizer's.
Status readGeneration(const std::string &dir, const HfJson &config,
                      const LlmConfig &llm, const TokenizerData &tokenizer,
                      GenerationDefaults &gen) {
  std::vector<int64_t> eos;
  std::string path =
      (std::filesystem::path(dir) / "generation_config.json").string();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::unique_ptr<HfJson> g;
    if (Status s = HfJson::load(path, g); !s)
      return s;
    bool sample;
    if (Status s =
            g->getDouble("temperature", gen.temperature, gen.temperature);
        !s)
      return s;
    if (Status s = g->getInt("top_k", gen.topK, gen.topK); !s)
      return s;
    if (Status s = g->getDouble("top_p", gen.topP, gen.topP); !s)
      return s;
    if (Status s =
            g->getInt("max_new_tokens", gen.maxNewTokens, gen.maxNewTokens);
        !s)
      return s;
    // transformers decodes greedily when do_sample is false, whatever the
    // temperature says; the sampler's greedy mode is temperature 0.
    if (Status s = g->getBool("do_sample", true, sample); !s)
      return s;
    if (!sample)
      gen.temperature = 0.0;
    if (gen.temperature < 0 || gen.topK < 0 || gen.topP <= 0 || gen.topP > 1)
      return Status::error(path + ": temperature must be >= 0, top_k >= 0 "
                                  "and top_p in (0, 1]");
    if (Status s = checkTokenIds(*g, config, llm, &eos); !s)
      return s;
  }
  if (eos.empty())
    if (Status s = checkTokenIds(config, config, llm, &eos); !s)
      return s;
  if (eos.empty() && tokenizer.eosId >= 0)
    eos.push_back(tokenizer.eosId);
  gen.eosIds.clear();
  for (int64_t id : eos)
    gen.eosIds.push_back(int32_t(id));
  return Status::ok();
}

/// The KV-cache geometry and step bounds of a model whose builder filled
/// `llm`'s model fields.
Status setKvGeometry(const HfImportOptions &options, const std::string &where,
                     LlmConfig &llm) {
  llm.blockSize = options.blockSize;
  llm.maxTokensPerStep = options.maxTokensPerStep;
  llm.maxSeqs = options.maxSeqs;
  int64_t maxContext =
      options.maxContext ? options.maxContext : llm.maxPositions;
  // Positions past the trained context have no embedding (GPT-2) or were
  // never seen in training (rotary), so a longer context is refused.
  if (maxContext > llm.maxPositions)
    return Status::error("--max-context " + std::to_string(maxContext) +
                         " exceeds the model's context of " +
                         std::to_string(llm.maxPositions) + " positions (" +
                         where + ")");
  llm.maxBlocksPerSeq = (maxContext + llm.blockSize - 1) / llm.blockSize;
  llm.kvDtype = options.kvDtype;
  llm.kvLayout = options.kvLayout.empty() ? defaultKvLayout(options.target)
                                          : options.kvLayout;
  return Status::ok();
}

/// The tokenizer, generation defaults and symbol bounds of a directory.
Status fillInfo(const std::string &dir, const HfJson &config,
                const LlmConfig &llm, HfModelInfo *info) {
  info->llm = llm;
  if (Status s = checkTokenIds(config, config, llm, nullptr); !s)
    return s;
  if (Status s = importTokenizer(dir, &info->tokenizer); !s)
    return s;
  info->generation = GenerationDefaults();
  if (Status s =
          readGeneration(dir, config, llm, info->tokenizer, info->generation);
      !s)
    return s;
  info->maxDims = stepMaxDims(llm);
  return Status::ok();
}

/// `ingot.stored_formats` for a GPTQ/AWQ directory's packed weights, with a
/// note per way of keeping them (ingot-quantize-weights mode=stored).
void recordPackedFormats(const std::string &dir, const QuantScheme &scheme,
                         func::FuncOp main,
                         const std::map<std::string, PackedFormat> &formats) {
  OpBuilder b(main.getContext());
  SmallVector<NamedAttribute> entries;
  std::map<std::string, int> counts;
  for (const auto &[name, f] : formats) {
    entries.push_back(b.getNamedAttr(
        name, graph::QuantAttr::get(b.getContext(), dtypeName(f.format),
                                    f.group)));
    std::string how = std::string(dtypeName(f.format)) + " g" +
                      std::to_string(f.group);
    how = f.requantised ? "requantised to " + how +
                              " from their values (a g_idx that reorders "
                              "features, or 8-bit zero points)"
          : f.exact ? "kept as " + how + " (codes and scales as stored)"
          : f.format == DType::F8E4M3
              ? "kept as " + how + " (e4m3 values as stored, scales rounded "
                                   "to f16)"
              : "kept as " + how +
                    " (codes and scales as stored, the minimum "
                    "-scale·zero rounded to f16)";
    ++counts[how];
  }
  main->setAttr("ingot.stored_formats", b.getDictionaryAttr(entries));
  for (const auto &[how, n] : counts)
    llvm::errs() << "note: " << dir << ": " << n << " " << scheme.method
                 << (scheme.method == "fp8"
                         ? ""
                         : " int" + std::to_string(scheme.bits))
                 << " weight" << (n == 1 ? "" : "s") << " " << how << "\n";
}

} // namespace

// On the CPU, attention reads one KV head's rows of a block as a single
// stream (dot products with its query heads, then the weighted V sum), so
// those rows are kept contiguous: fewer cache lines and pages touched, and
// the hardware prefetcher sees one sequential stream per run.
std::string defaultKvLayout(const std::string &target) {
  (void)target; // cpu is the only target so far
  return kvLayoutName(KvLayout::BlockHeadTokenDim);
}

std::vector<std::string> supportedHfArchitectures() {
  std::vector<std::string> names;
  for (const Architecture &a : kArchitectures)
    names.push_back(a.name);
  return names;
}

namespace hf {

std::vector<std::string> stepMaxDims(const LlmConfig &llm) {
  return {"tokens=" + std::to_string(llm.maxTokensPerStep),
          "seqs=" + std::to_string(llm.maxSeqs),
          "blocks=" + std::to_string(llm.maxBlocksPerSeq)};
}

Status importStep(const HfJson &config, const TensorCatalog &tensors,
                  const HfImportOptions &options, ModuleOp module,
                  LlmConfig &llm) {
  if (Status s = checkOptions(options); !s)
    return s;
  std::string archName;
  if (Status s = config.getFirstString("architectures", archName); !s)
    return s;
  const Architecture *arch = nullptr;
  for (const Architecture &a : kArchitectures)
    if (archName == a.name)
      arch = &a;
  if (!arch)
    return config.error(
        "architectures",
        "names '" + archName +
            "', which is not supported — supported: " + knownList());

  MLIRContext *ctx = module.getContext();
  ctx->getOrLoadDialect<func::FuncDialect>();
  ctx->getOrLoadDialect<graph::IngotDialect>();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location funcLoc = FileLineColLoc::get(ctx, config.path(), 0, 0);
  StepInputs inputs;
  func::FuncOp func = createMain(b, funcLoc, inputs);
  b.setInsertionPointToEnd(&func.getBody().front());

  HfGraph g(b, tensors, config, inputs);
  // Verifier diagnostics become part of the error message, not stderr noise.
  std::string lastDiagnostic;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    lastDiagnostic = diag.str();
    g.setDiagnostic(lastDiagnostic);
    return success();
  });
  llm = LlmConfig();
  llm.architecture = archName;
  Value logits;
  Status status = arch->build(g, archName, llm, logits);
  if (status) {
    func::ReturnOp::create(b, funcLoc, ValueRange{logits});
    func.setType(b.getFunctionType(func.getArgumentTypes(), logits.getType()));
    func.setResultAttr(0, "ingot.name", b.getStringAttr("logits"));
    if (failed(mlir::verify(func)))
      status = Status::error(config.path() +
                             ": internal: the imported function does "
                             "not verify: " +
                             lastDiagnostic);
  }
  if (status)
    status = g.checkAllTensorsUsed(archName, llm.numLayers);
  if (status)
    status = setKvGeometry(options, config.path(), llm);
  if (!status)
    func.erase();
  return status;
}

} // namespace hf

Status importHf(const std::string &dir, const HfImportOptions &options,
                ModuleOp module, std::unique_ptr<WeightSource> *weights,
                HfModelInfo *info) {
  if (Status s = checkOptions(options); !s)
    return s;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::error(dir + ": not a directory");
  std::unique_ptr<HfJson> config;
  std::string configPath =
      (std::filesystem::path(dir) / "config.json").string();
  if (Status s = HfJson::load(configPath, config); !s)
    return s;
  std::unique_ptr<HfTensorStore> store;
  if (Status s = HfTensorStore::open(dir, store); !s)
    return s;
  std::optional<QuantScheme> scheme;
  if (Status s = readQuantScheme(*config, &scheme); !s)
    return s;
  std::unique_ptr<QuantizedCatalog> packed;
  const TensorCatalog *catalog = store.get();
  if (scheme) {
    packed = std::make_unique<QuantizedCatalog>(*store, *scheme);
    if (Status s = packed->scan(); !s)
      return s;
    catalog = packed.get();
  }
  LlmConfig llm;
  if (Status s = importStep(*config, *catalog, options, module, llm); !s)
    return s;
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (info)
    if (Status s = fillInfo(dir, *config, llm, info); !s) {
      main.erase();
      return s;
    }
  if (packed)
    recordPackedFormats(dir, *scheme, main, packed->formats());
  std::unique_ptr<WeightSource> plain =
      std::make_unique<HfWeightSource>(std::move(store));
  if (weights)
    *weights = packed ? makeQuantizedWeightSource(std::move(plain),
                                                  std::move(packed))
                      : std::move(plain);
  return Status::ok();
}

} // namespace ingot::compiler
