//===- GgufImportInternal.h - Pieces of the GGUF importer -------*- C++ -*-===//
//
// Private to the GGUF importer. The driver (GgufImporter.cpp) turns the
// metadata into the config.json an architecture builder reads
// (GgufImportConfig.cpp), presents the tensors under their Hugging Face
// names (GgufImportWeights.cpp) and reads the tokenizer
// (GgufImportTokenizer.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/gguf/GgufFile.h"
#include "compiler/gguf/GgufRepack.h"
#include "compiler/hf/Safetensors.h"
#include "ingot/Manifest.h"
#include "ingot/WeightSource.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ingot::compiler::gguf {

/// What the importer learns of an architecture from the metadata.
struct GgufModel {
  std::string arch;          // general.architecture: "llama", "qwen2"
  llvm::json::Object config; // config.json keys the HF builder reads
  int64_t heads = 0, kvHeads = 0;
  /// llama.cpp's converter interleaves the two rotary halves of each Q/K
  /// head for llama-family models; these get their rows put back.
  bool permutedQk = false;
};

/// Reads the architecture's hyper-parameters into a config.json object.
/// An unknown architecture lists the known ones.
Status readGgufModel(const GgufFile &file, GgufModel &model);
std::vector<std::string> knownGgufArchitectures();

/// One GGUF tensor as the builder sees it, by Hugging Face name.
struct MappedTensor {
  const GgufTensorInfo *info = nullptr;
  hf::SafetensorsTensor view;    // dtype and shape of the produced values
  int64_t permuteHeads = 0;  // > 0: undo the Q/K row interleave
};

/// The file's tensors under Hugging Face names; a tensor with no known
/// name is an error (a file with parts ingot would silently drop).
Status mapGgufTensors(const GgufFile &file, const GgufModel &model,
                      std::map<std::string, MappedTensor> &out);

/// The catalog the architecture builder reads shapes from.
class GgufCatalog : public hf::TensorCatalog {
public:
  GgufCatalog(const GgufFile &file,
              const std::map<std::string, MappedTensor> &tensors)
      : file_(file), tensors_(tensors) {}
  const hf::SafetensorsTensor *lookup(llvm::StringRef key,
                                  std::string *file) const override;
  const std::string &indexPath() const override { return file_.path(); }
  std::vector<std::string> names() const override;
  std::string storedName(llvm::StringRef key) const override;

private:
  const GgufFile &file_;
  const std::map<std::string, MappedTensor> &tensors_;
};

/// Produces the values (and for Q8_0/Q4_0/Q4_1 the stored blocks) of the
/// mapped tensors, one tensor in memory at a time.
std::unique_ptr<WeightSource>
makeGgufWeightSource(std::unique_ptr<GgufFile> file,
                     std::map<std::string, MappedTensor> tensors);

/// The ingot block format a GGUF tensor type is kept in: its blocks copied
/// or repacked (GgufRepack.h), or, when no format holds its codes,
/// requantised from its dequantised values (repack = nullopt).
struct KeptFormat {
  DType format;
  int64_t group;
  std::optional<RepackKind> repack;
};
std::optional<KeptFormat> keptFormatOf(GgmlType type);

/// The tokenizer (tokenizer.ggml.*), chat template and stop ids.
Status readGgufTokenizer(const GgufFile &file, TokenizerData *out);
Status readGgufGeneration(const GgufFile &file, const TokenizerData &t,
                          GenerationDefaults *out);

} // namespace ingot::compiler::gguf
