//===- GgufImportConfig.cpp - GGUF metadata as config.json ----------------===//
//
// The architecture builders read a Hugging Face config.json; a GGUF file
// carries the same hyper-parameters under `<arch>.*` keys. Each is read
// with its type checked and written under the name transformers uses, so a
// GGUF and the directory it was converted from build the same graph.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufImportInternal.h"
#include "compiler/hf/HfConfig.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace ingot::compiler::gguf {
namespace {

struct ArchInfo {
  const char *gguf;  // general.architecture
  const char *hf;    // the builder's architectures[0]
  bool permutedQk;   // llama.cpp's converter permutes Q/K rows
};

// qwen2's and qwen3's converters keep the HF row order; llama's (also used for
// Mistral-style models) interleaves the rotary halves.
constexpr ArchInfo kArchs[] = {
    {"llama", "LlamaForCausalLM", true},
    {"qwen2", "Qwen2ForCausalLM", false},
    {"qwen3", "Qwen3ForCausalLM", false},
    {"gemma2", "Gemma2ForCausalLM", false},
    {"gemma3", "Gemma3ForCausalLM", false},
    {"phi3", "Phi3ForCausalLM", false},
};

/// GGUF stores floats as f32: 1e-5 reads back as 9.99999975e-06. The
/// shortest decimal of that f32 is the value the original config held, so
/// the graph matches the one built from the Hugging Face directory.
double f32Decimal(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf) - 1, float(v));
  *r.ptr = 0;
  return std::strtod(buf, nullptr);
}

/// Reads `<arch>.<key>` as a positive integer into config[name], bounded
/// as config.json's `name` is (hf::configSizeLimit), else by 2^31.
Status positive(const GgufFile &f, const std::string &arch, const char *key,
                const char *name, llvm::json::Object &config,
                int64_t *out = nullptr) {
  uint64_t v = 0;
  const std::string full = arch + "." + key;
  if (Status s = f.getUint(full, v); !s)
    return s;
  const int64_t sizeLimit = hf::configSizeLimit(name);
  const uint64_t max = sizeLimit ? uint64_t(sizeLimit) : uint64_t(1) << 31;
  if (v < 1 || v > max)
    return f.error(full, "is " + std::to_string(v) +
                             ", out of range (expected 1.." +
                             std::to_string(max) + ")");
  config[name] = int64_t(v);
  if (out)
    *out = int64_t(v);
  return Status::ok();
}

Status readRope(const GgufFile &f, const std::string &arch, int64_t headDim,
                llvm::json::Object &config) {
  double theta = 0;
  if (Status s = f.getFloat(arch + ".rope.freq_base", 10000.0, theta); !s)
    return s;
  if (!(theta > 0) || !std::isfinite(theta))
    return f.error(arch + ".rope.freq_base", "must be positive");
  config["rope_theta"] = f32Decimal(theta);
  std::string scaling;
  if (Status s = f.getString(arch + ".rope.scaling.type", "none", scaling); !s)
    return s;
  if (scaling == "linear") {
    double factor = 0;
    if (Status s = f.getFloat(arch + ".rope.scaling.factor", factor); !s)
      return s;
    if (!(factor > 0))
      return f.error(arch + ".rope.scaling.factor", "must be positive");
    config["rope_scaling"] =
        llvm::json::Object{{"rope_type", "linear"}, {"factor", factor}};
  } else if (scaling != "none") {
    return f.error(arch + ".rope.scaling.type",
                   "is '" + scaling + "', which is not supported — "
                   "supported: none, linear");
  }
  uint64_t rotary = uint64_t(headDim);
  if (Status s = f.getUint(arch + ".rope.dimension_count", rotary, rotary); !s)
    return s;
  if (rotary < 2 || rotary > uint64_t(headDim) || rotary % 2)
    return f.error(arch + ".rope.dimension_count",
                   "is " + std::to_string(rotary) +
                       "; expected an even number up to the head size " +
                       std::to_string(headDim));
  if (rotary != uint64_t(headDim))
    config["partial_rotary_factor"] = double(rotary) / double(headDim);
  return Status::ok();
}

/// A float `<arch>.<key>` into config[name]; absent: config[name] = null
/// when `nullIfAbsent` (the file, not the HF class default, decides).
Status optionalFloat(const GgufFile &f, const std::string &arch,
                     const char *key, const char *name,
                     llvm::json::Object &config, bool nullIfAbsent) {
  const std::string full = arch + "." + key;
  if (!f.find(full)) {
    if (nullIfAbsent)
      config[name] = nullptr;
    return Status::ok();
  }
  double v = 0;
  if (Status s = f.getFloat(full, v); !s)
    return s;
  if (!(v > 0))
    return f.error(full, "must be positive");
  config[name] = f32Decimal(v);
  return Status::ok();
}

/// Gemma 2/3: what the GGUF carries (sliding window, soft-caps, Gemma 3's
/// local rope base and pattern) and what llama.cpp fixes in code, which
/// the file then implies: the local base 10000 and a full layer every
/// sixth (Gemma 3) unless stored, and attention scaled by
/// (hidden / heads)^-1/2 for the 27B models (46 and 62 layers), by
/// head_dim^-1/2 otherwise (their query_pre_attn_scalar).
Status readGemma(const GgufFile &f, const GgufModel &m, int64_t hidden,
                 int64_t headDim, llvm::json::Object &c) {
  const std::string &a = m.arch;
  c["hidden_activation"] = "gelu_pytorch_tanh";
  if (Status s = positive(f, a, "attention.sliding_window", "sliding_window",
                          c);
      !s)
    return s;
  const bool gemma3 = a == "gemma3";
  if (Status s = optionalFloat(f, a, "final_logit_softcapping",
                               "final_logit_softcapping", c, true);
      !s)
    return s;
  if (Status s = optionalFloat(f, a, "attn_logit_softcapping",
                               "attn_logit_softcapping", c, true);
      !s)
    return s;
  uint64_t layers = 0;
  if (Status s = f.getUint(a + ".block_count", layers); !s)
    return s;
  const bool big = layers == (gemma3 ? 62u : 46u);
  c["query_pre_attn_scalar"] = big ? hidden / m.heads : headDim;
  if (!gemma3)
    return Status::ok();
  c["rope_local_base_freq"] = 10000.0;
  if (Status s = optionalFloat(f, a, "rope.freq_base_swa",
                               "rope_local_base_freq", c, false);
      !s)
    return s;
  uint64_t pattern = 6;
  if (Status s = f.getUint(a + ".attention.sliding_window_pattern", 6, pattern);
      !s)
    return s;
  c["sliding_window_pattern"] = int64_t(pattern);
  return Status::ok();
}

} // namespace

std::vector<std::string> knownGgufArchitectures() {
  std::vector<std::string> names;
  for (const ArchInfo &a : kArchs)
    names.push_back(a.gguf);
  return names;
}

Status readGgufModel(const GgufFile &f, GgufModel &model) {
  if (Status s = f.getString("general.architecture", model.arch); !s)
    return s;
  const ArchInfo *arch = nullptr;
  for (const ArchInfo &a : kArchs)
    if (model.arch == a.gguf)
      arch = &a;
  if (!arch) {
    std::string known;
    for (const std::string &n : knownGgufArchitectures())
      known += (known.empty() ? "" : ", ") + n;
    return f.error("general.architecture",
                   "is '" + model.arch +
                       "', which is not supported — supported: " + known);
  }
  model.permutedQk = arch->permutedQk;
  llvm::json::Object &c = model.config;
  c["architectures"] = llvm::json::Array{arch->hf};
  const std::string &a = model.arch;
  int64_t hidden = 0;
  if (Status s = positive(f, a, "block_count", "num_hidden_layers", c); !s)
    return s;
  if (Status s = positive(f, a, "embedding_length", "hidden_size", c, &hidden);
      !s)
    return s;
  if (Status s = positive(f, a, "feed_forward_length", "intermediate_size", c);
      !s)
    return s;
  if (Status s = positive(f, a, "context_length", "max_position_embeddings", c);
      !s)
    return s;
  if (Status s = positive(f, a, "attention.head_count", "num_attention_heads",
                          c, &model.heads);
      !s)
    return s;
  model.kvHeads = model.heads;
  if (f.find(a + ".attention.head_count_kv"))
    if (Status s = positive(f, a, "attention.head_count_kv",
                            "num_key_value_heads", c, &model.kvHeads);
        !s)
      return s;
  int64_t headDim = hidden / model.heads;
  if (f.find(a + ".attention.key_length"))
    if (Status s = positive(f, a, "attention.key_length", "head_dim", c,
                            &headDim);
        !s)
      return s;
  if (const GgufValue *v = f.find(a + ".attention.value_length"))
    if (!v->isUnsigned() || int64_t(v->u) != headDim)
      return f.error(a + ".attention.value_length",
                     "differs from the key length " + std::to_string(headDim) +
                         "; ingot's attention needs them equal");
  double eps = 0;
  if (Status s = f.getFloat(a + ".attention.layer_norm_rms_epsilon", eps); !s)
    return s;
  if (!(eps > 0) || !std::isfinite(eps))
    return f.error(a + ".attention.layer_norm_rms_epsilon", "must be positive");
  c["rms_norm_eps"] = f32Decimal(eps);
  if (Status s = readRope(f, a, headDim, c); !s)
    return s;
  c["hidden_act"] = "silu";
  c["tie_word_embeddings"] = f.tensor("output.weight") == nullptr;
  if (a == "gemma2" || a == "gemma3")
    return readGemma(f, model, hidden, headDim, c);
  if (a == "phi3" && f.find(a + ".attention.sliding_window"))
    return positive(f, a, "attention.sliding_window", "sliding_window", c);
  // vocab_size follows the embedding's rows, checked when the tensors map.
  return Status::ok();
}

} // namespace ingot::compiler::gguf
