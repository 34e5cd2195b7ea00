//===- QuantizedCheckpoint.h - GPTQ and AWQ linear weights ------*- C++ -*-===//
//
// Private to the Hugging Face importer. A directory whose config.json has a
// `quantization_config` with quant_method "gptq" or "awq" stores each
// linear weight "X.weight" as integer codes X.qweight, zero points X.qzeros
// and f16 scales X.scales per group of `group_size` input features (GPTQ
// also X.g_idx, the group of each feature). The bit layouts, with their
// sources, are in docs/quantized-checkpoints.md. quant_method "fp8" stores
// F8_E4M3 weights with float scales (Fp8Checkpoint.h), kept as f8e4m3.
//
// The catalog presents every such weight as an f32 [N, K] "X.weight", so
// the architecture builders need not know; the weight source produces its
// values and, where one of ingot's block formats holds them, its blocks:
//   symmetric (every zero 2^(bits-1)), 4-bit -> q4, 8-bit -> q8: exact;
//   asymmetric 4-bit -> q4m with the minimum -scale·zero rounded to f16;
//   otherwise (8-bit asymmetric, a g_idx that is not k / group_size) the
//   values are requantised to q8 (the importer notes it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/hf/HfConfig.h"
#include "compiler/hf/Safetensors.h"
#include "ingot/WeightSource.h"

#include <map>
#include <vector>
#include <memory>
#include <optional>
#include <string>

namespace ingot::compiler::hf {

struct QuantScheme {
  std::string method; // "gptq", "awq" or "fp8"
  int bits = 4;
  int64_t group = 128; // along K; -1 = one group per row
  bool zerosMinusOne = false; // GPTQ v1 checkpoints store zero - 1
  std::vector<int64_t> blockSize; // fp8: weight_block_size [rows, cols]
};

/// config.json's quantization_config; nullopt when there is none. Methods
/// and settings ingot does not read are errors naming the key.
Status readQuantScheme(const HfJson &config,
                       std::optional<QuantScheme> *out);

/// How one packed linear weight is kept (see the file comment).
struct PackedFormat {
  DType format;
  int64_t group;
  bool exact; // false: the minimum is rounded to f16, or requantised
  bool requantised;
};

/// The store, with each packed linear presented as "X.weight".
class QuantizedCatalog : public TensorCatalog {
public:
  QuantizedCatalog(const HfTensorStore &store, QuantScheme scheme);
  /// Reads every packed linear's shapes (and GPTQ g_idx, zeros) up front.
  Status scan();
  const SafetensorsTensor *lookup(llvm::StringRef key,
                                  std::string *file) const override;
  const std::string &indexPath() const override { return store_.indexPath(); }
  /// The packed "X.weight"s and the store's other tensors; the parts of a
  /// packed weight (X.qweight, X.scales, X.weight_scale, ...) are in it.
  std::vector<std::string> names() const override;
  /// The format each packed "X.weight" is kept in.
  const std::map<std::string, PackedFormat> &formats() const {
    return formats_;
  }
  const HfTensorStore &store() const { return store_; }
  const QuantScheme &scheme() const { return scheme_; }

private:
  const HfTensorStore &store_;
  QuantScheme scheme_;
  std::map<std::string, SafetensorsTensor, std::less<>> views_;
  std::map<std::string, PackedFormat> formats_;
};

/// Wraps the directory's weight source: packed weights come out as f32
/// values or as blocks; everything else passes through.
/// `plain` must own the store the catalog reads.
std::unique_ptr<WeightSource>
makeQuantizedWeightSource(std::unique_ptr<WeightSource> plain,
                          std::unique_ptr<QuantizedCatalog> catalog);

} // namespace ingot::compiler::hf
