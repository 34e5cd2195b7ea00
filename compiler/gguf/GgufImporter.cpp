//===- GgufImporter.cpp - GGUF files into ingot ---------------------------===//
//
// The driver: opens and validates the file, turns its metadata into the
// config an architecture builder reads, maps its tensors to Hugging Face
// names, lets the same builder as for a directory emit `@main`, records the
// block format each quantised tensor keeps, and reads the tokenizer.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufImporter.h"
#include "compiler/gguf/GgufImportInternal.h"
#include "compiler/hf/HfGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <fstream>

using namespace mlir;

namespace ingot::compiler {
namespace {

using namespace gguf;

/// What happens to a type that is not copied, for the note.
std::string conversionText(const KeptFormat &k) {
  std::string fmt = std::string(dtypeName(k.format)) + " g" +
                    std::to_string(k.group);
  if (!k.repack)
    return "requantised to " + fmt +
           " from their values (no ingot format holds their codes)";
  if (*k.repack == RepackKind::SameValues)
    return "repacked into " + fmt + " (every value unchanged)";
  return "repacked into " + fmt +
         " (codes kept, scales and minimums rounded to f16)";
}

/// `ingot.stored_formats` on @main: the block format of every quantised
/// tensor. Types kept by conversion get one note each on stderr, so nobody
/// is surprised by what the artifact holds.
void recordStoredFormats(const std::string &path, func::FuncOp func,
                         const std::map<std::string, MappedTensor> &tensors) {
  OpBuilder b(func.getContext());
  SmallVector<NamedAttribute> entries;
  struct Converted {
    int count = 0;
    std::string example;
    KeptFormat kept;
  };
  std::map<std::string, Converted> converted; // by GGUF type name
  for (const auto &[name, t] : tensors) {
    std::optional<KeptFormat> kept = keptFormatOf(t.info->type.type);
    if (!kept)
      continue;
    entries.push_back(b.getNamedAttr(
        name, graph::QuantAttr::get(b.getContext(), dtypeName(kept->format),
                                    kept->group)));
    if (kept->repack != RepackKind::Copy) {
      Converted &c = converted[t.info->type.name];
      if (c.count++ == 0)
        c.example = t.info->name, c.kept = *kept;
    }
  }
  func->setAttr("ingot.stored_formats", b.getDictionaryAttr(entries));
  for (const auto &[type, c] : converted)
    llvm::errs() << "note: " << path << ": " << c.count << " tensor"
                 << (c.count == 1 ? "" : "s") << " of type " << type
                 << " (e.g. '" << c.example << "') "
                 << conversionText(c.kept) << "\n";
}

/// The embedding's rows are the vocabulary; the tokenizer must agree.
Status setVocabSize(const GgufFile &file,
                    const std::map<std::string, MappedTensor> &tensors,
                    GgufModel &model) {
  auto it = tensors.find("model.embed_tokens.weight");
  if (it == tensors.end() || it->second.view.shape.size() != 2)
    return Status::error(file.path() +
                         ": no 2-D tensor 'token_embd.weight' (the token "
                         "embedding)");
  model.config["vocab_size"] = it->second.view.shape[0];
  return Status::ok();
}

} // namespace

bool isGgufFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

std::vector<std::string> supportedGgufArchitectures() {
  return knownGgufArchitectures();
}

Status importGguf(const std::string &path, const HfImportOptions &options,
                  ModuleOp module, std::unique_ptr<WeightSource> *weights,
                  HfModelInfo *info) {
  std::unique_ptr<GgufFile> file;
  if (Status s = GgufFile::open(path, file); !s)
    return s;
  GgufModel model;
  if (Status s = readGgufModel(*file, model); !s)
    return s;
  std::map<std::string, MappedTensor> tensors;
  if (Status s = mapGgufTensors(*file, model, tensors); !s)
    return s;
  if (Status s = setVocabSize(*file, tensors, model); !s)
    return s;
  hf::HfJson config(path, "", std::move(model.config));
  GgufCatalog catalog(*file, tensors);
  LlmConfig llm;
  if (Status s = hf::importStep(config, catalog, options, module, llm); !s)
    return s;
  auto func = module.lookupSymbol<func::FuncOp>("main");
  recordStoredFormats(path, func, tensors);
  if (info) {
    info->llm = llm;
    Status s = readGgufTokenizer(*file, &info->tokenizer);
    if (s)
      s = readGgufGeneration(*file, info->tokenizer, &info->generation);
    if (s && int64_t(info->tokenizer.vocab.size()) > llm.vocabSize)
      s = Status::error(path + ": the tokenizer has " +
                        std::to_string(info->tokenizer.vocab.size()) +
                        " tokens but the embedding only " +
                        std::to_string(llm.vocabSize) + " rows");
    if (!s) {
      func.erase();
      return s;
    }
    info->maxDims = hf::stepMaxDims(llm);
  }
  if (weights)
    *weights = makeGgufWeightSource(std::move(file), std::move(tensors));
  return Status::ok();
}

} // namespace ingot::compiler
