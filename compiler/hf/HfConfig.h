//===- HfConfig.h - Typed access to Hugging Face JSON files -----*- C++ -*-===//
//
// Private to the Hugging Face importer. config.json and
// generation_config.json are free-form JSON; every read goes through an
// accessor that checks the type and, on failure, names the file and the key,
// so a malformed config never turns into a wrong graph.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ingot::compiler::hf {

/// The largest value a size key of config.json may have (the GGUF
/// importer applies the same to the metadata it maps to these keys), or 0
/// for a key that is not a size. The bounds lie far above any released
/// model (405B Llama: 126 layers, hidden 16384, intermediate 53248, vocab
/// 128256), yet low enough that nothing sized from them before the weights
/// are checked against them (per-layer tables, shape products) can exhaust
/// memory or overflow: num_hidden_layers / n_layer 1024, hidden_size /
/// n_embd 2^20, intermediate_size / n_inner 2^22, attention and KV heads
/// 4096, head_dim 2^16, vocab_size 2^24, max_position_embeddings /
/// n_positions 2^24.
int64_t configSizeLimit(llvm::StringRef key);

/// One JSON object (a file, or an object nested in one) with checked reads.
/// "Optional" getters treat an absent key and an explicit null alike, as
/// transformers does.
class HfJson {
public:
  /// Parses `path`, which must hold a JSON object.
  static Status load(const std::string &path, std::unique_ptr<HfJson> &out);
  /// A nested object, sharing the file name in messages as "file: key.sub".
  HfJson(std::string path, std::string prefix, llvm::json::Object object)
      : path_(std::move(path)), prefix_(std::move(prefix)),
        object_(std::move(object)) {}

  const std::string &path() const { return path_; }
  /// "config.json" style name for messages, with the nesting prefix.
  std::string keyName(llvm::StringRef key) const { return prefix_ + key.str(); }
  /// Present and not null.
  bool has(llvm::StringRef key) const;
  /// Present with the value null (which some configs use to switch a
  /// feature off that is on when the key is absent).
  bool isNull(llvm::StringRef key) const;

  Status getInt(llvm::StringRef key, int64_t &out) const;
  Status getInt(llvm::StringRef key, int64_t dflt, int64_t &out) const;
  /// A required integer that must be >= `min`.
  Status getPositive(llvm::StringRef key, int64_t &out, int64_t min = 1) const;
  Status getDouble(llvm::StringRef key, double &out) const;
  Status getDouble(llvm::StringRef key, double dflt, double &out) const;
  /// A norm epsilon (rms_norm_eps, layer_norm_epsilon), `dflt` when absent:
  /// a number that stays positive and finite as the f32 the kernels use.
  Status getEpsilon(llvm::StringRef key, double dflt, double &out) const;
  Status getBool(llvm::StringRef key, bool dflt, bool &out) const;
  Status getString(llvm::StringRef key, std::string &out) const;
  Status getString(llvm::StringRef key, const std::string &dflt,
                   std::string &out) const;
  /// An integer or a list of integers (eos_token_id); absent leaves `out`.
  Status getIntList(llvm::StringRef key, std::vector<int64_t> &out) const;
  /// A required size key: an integer in [1, configSizeLimit(key)].
  Status getSize(llvm::StringRef key, int64_t &out) const;
  /// The same, `dflt` when absent.
  Status getSize(llvm::StringRef key, int64_t dflt, int64_t &out) const;
  /// A required integer in [min, max]: "is N, out of range (expected
  /// min..max)" otherwise.
  Status getInRange(llvm::StringRef key, int64_t min, int64_t max,
                    int64_t &out) const;
  /// The ids of a `*_token_id` key: absent or null leaves `out` empty; else
  /// an integer (for eos_token_id also a list of them), each in
  /// [0, vocab). pad_token_id may also be -1, which old Llama conversions
  /// wrote for "no padding token" (ingot never pads). `vocabFrom` names
  /// where `vocab` comes from, for messages.
  Status getTokenIds(llvm::StringRef key, int64_t vocab,
                     const std::string &vocabFrom,
                     std::vector<int64_t> &out) const;
  /// A list of strings; absent leaves `out` empty.
  Status getStringList(llvm::StringRef key,
                       std::vector<std::string> &out) const;
  /// A nested object; nullopt when absent or null.
  Status getObject(llvm::StringRef key, std::optional<HfJson> &out) const;
  /// The first element of a list of strings (architectures).
  Status getFirstString(llvm::StringRef key, std::string &out) const;

  /// "<file>: <key>: <what>".
  Status error(llvm::StringRef key, const std::string &what) const;

private:
  const llvm::json::Value *lookup(llvm::StringRef key) const;

  std::string path_;
  std::string prefix_;
  llvm::json::Object object_;
};

} // namespace ingot::compiler::hf
