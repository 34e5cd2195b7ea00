//===- LlamaBuilder.cpp - Llama-family decoders into one engine step ------===//
//
// Llama, Qwen2, Qwen3, Mistral and Phi-3 share one pre-norm decoder layer:
//   h += o_proj(paged_attention(rope(q), rope(k), v))   on rms_norm(h)
//   h += down_proj(silu(gate_proj(x)) · up_proj(x))     on rms_norm(h)
// and differ only in details captured by Flavor: biases on q/k/v (Qwen2),
// per-head q/k norms (Qwen3),
// fused qkv / gate_up weights (Phi-3, sliced by row so each linear still
// reads one contiguous weight) and which layers use a sliding window.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/HfGraph.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace ingot::compiler::hf {
namespace {

enum class Window { None, Config, Qwen2 };

/// How one architecture departs from Llama.
struct Flavor {
  bool qkvBias = false; // q/k/v always carry a bias
  bool fused = false;   // qkv_proj and gate_up_proj
  Window window = Window::None;
  double defaultEps = 1e-6; // rms_norm_eps when config.json omits it
  // Only transformers' Llama reads attention_bias and mlp_bias (Qwen3 the
  // first); the others fix their biases in code, so a stray key in their
  // config means nothing.
  bool attnBiasKey = false, mlpBiasKey = false;
  bool qkNorm = false; // RMSNorm over each q/k head before rope (Qwen3)
};

Flavor flavorOf(llvm::StringRef arch) {
  Flavor f;
  if (arch == "LlamaForCausalLM") {
    f.attnBiasKey = f.mlpBiasKey = true;
  } else if (arch == "Qwen3ForCausalLM") {
    f.attnBiasKey = f.qkNorm = true;
    f.window = Window::Qwen2;
  } else if (arch == "Qwen2ForCausalLM") {
    f.qkvBias = true;
    f.window = Window::Qwen2;
  } else if (arch == "MistralForCausalLM") {
    f.window = Window::Config;
  } else if (arch == "Phi3ForCausalLM") {
    f.fused = true;
    f.window = Window::Config;
    f.defaultEps = 1e-5;
  }
  return f;
}

/// Everything the layers need from config.json, read and checked up front.
struct Hyper {
  int64_t layers, hidden, heads, kvHeads, headDim, inter, vocab, maxPos;
  int64_t rotaryDim;
  double eps, theta;
  std::string scaling = "none";
  double factor = 1, lowFreq = 1, highFreq = 1;
  int64_t originalMaxPos = 0;
  bool attnBias = false, mlpBias = false, tied = false;
  std::vector<int64_t> window; // per layer, 0 = none
};

/// rope_theta and rope_scaling, or transformers 5's rope_parameters.
Status readRope(const HfJson &c, Hyper &h) {
  std::optional<HfJson> params, scaling;
  if (Status s = c.getObject("rope_parameters", params); !s)
    return s;
  if (Status s = c.getObject("rope_scaling", scaling); !s)
    return s;
  const HfJson &thetaFrom = c.has("rope_theta") || !params ? c : *params;
  if (Status s = thetaFrom.getDouble("rope_theta", 10000.0, h.theta); !s)
    return s;
  if (!(h.theta > 0) || !std::isfinite(h.theta))
    return thetaFrom.error("rope_theta", "must be positive and finite");
  const HfJson *rope = scaling ? &*scaling : params ? &*params : nullptr;
  if (!rope)
    return Status::ok();
  // Older configs say "type", newer ones "rope_type".
  const char *typeKey = rope->has("rope_type") ? "rope_type" : "type";
  std::string type;
  if (Status s = rope->getString(typeKey, "default", type); !s)
    return s;
  if (type == "default")
    return Status::ok();
  if (type == "linear") {
    h.scaling = "linear";
    if (Status s = rope->getDouble("factor", h.factor); !s)
      return s;
    if (!(h.factor > 0))
      return rope->error("factor", "must be positive");
    return Status::ok();
  }
  if (type != "llama3")
    return rope->error(typeKey, "is '" + type +
                                    "', which is not supported — supported: "
                                    "null, 'default', 'linear', 'llama3'");
  h.scaling = "llama3";
  if (Status s = rope->getDouble("factor", h.factor); !s)
    return s;
  if (Status s = rope->getDouble("low_freq_factor", h.lowFreq); !s)
    return s;
  if (Status s = rope->getDouble("high_freq_factor", h.highFreq); !s)
    return s;
  if (Status s = rope->getPositive("original_max_position_embeddings",
                                   h.originalMaxPos);
      !s)
    return s;
  if (h.factor <= 0 || h.lowFreq <= 0 || h.highFreq <= h.lowFreq)
    return rope->error("factor", "and low/high_freq_factor must be positive "
                                 "with high_freq_factor > low_freq_factor");
  return Status::ok();
}

/// The sliding window of each layer: an explicit layer_types list decides
/// where newer configs have one; else each architecture's rule.
Status readWindows(const HfJson &c, const Flavor &f, Hyper &h) {
  h.window.assign(h.layers, 0);
  if (f.window == Window::None || !c.has("sliding_window"))
    return Status::ok();
  int64_t window;
  if (Status s = c.getPositive("sliding_window", window); !s)
    return s;
  std::vector<std::string> types;
  if (Status s = c.getStringList("layer_types", types); !s)
    return s;
  if (!types.empty()) {
    if (int64_t(types.size()) != h.layers)
      return c.error("layer_types", "has " + std::to_string(types.size()) +
                                        " entries for " +
                                        std::to_string(h.layers) + " layers");
    for (int64_t i = 0; i < h.layers; ++i) {
      if (types[i] != "sliding_attention" && types[i] != "full_attention")
        return c.error("layer_types", "has '" + types[i] +
                                          "' — supported: "
                                          "'full_attention', "
                                          "'sliding_attention'");
      h.window[i] = types[i] == "sliding_attention" ? window : 0;
    }
    return Status::ok();
  }
  int64_t first = 0;
  if (f.window == Window::Qwen2) {
    // Qwen2 slides only when asked, and only from max_window_layers on.
    bool use;
    if (Status s = c.getBool("use_sliding_window", false, use); !s)
      return s;
    if (!use)
      return Status::ok();
    // transformers' Qwen2Config defaults max_window_layers to 28.
    if (Status s = c.getInt("max_window_layers", 28, first); !s)
      return s;
  }
  for (int64_t i = std::max<int64_t>(first, 0); i < h.layers; ++i)
    h.window[i] = window;
  return Status::ok();
}

Status readHyper(const HfJson &c, const Flavor &f, Hyper &h) {
  for (auto [key, out] : {std::pair{"num_hidden_layers", &h.layers},
                          {"hidden_size", &h.hidden},
                          {"num_attention_heads", &h.heads},
                          {"intermediate_size", &h.inter},
                          {"vocab_size", &h.vocab},
                          {"max_position_embeddings", &h.maxPos}})
    if (Status s = c.getSize(key, *out); !s)
      return s;
  if (Status s = c.getSize("num_key_value_heads", h.heads, h.kvHeads); !s)
    return s;
  if (h.heads % h.kvHeads)
    return c.error("num_attention_heads",
                   llvm::formatv("({0}) is not a multiple of "
                                 "num_key_value_heads ({1})",
                                 h.heads, h.kvHeads)
                       .str());
  if (c.has("head_dim")) {
    if (Status s = c.getSize("head_dim", h.headDim); !s)
      return s;
  } else {
    if (h.hidden % h.heads)
      return c.error("hidden_size", llvm::formatv("({0}) is not divisible by "
                                                  "num_attention_heads ({1})",
                                                  h.hidden, h.heads)
                                        .str());
    h.headDim = h.hidden / h.heads;
  }
  double partial;
  if (Status s = c.getDouble("partial_rotary_factor", 1.0, partial); !s)
    return s;
  h.rotaryDim = int64_t(std::llround(double(h.headDim) * partial));
  if (partial <= 0 || partial > 1 || h.rotaryDim % 2)
    return c.error("partial_rotary_factor",
                   "gives a rotary dim of " + std::to_string(h.rotaryDim) +
                       " for head_dim " + std::to_string(h.headDim) +
                       "; it must be even and in (0, head_dim]");
  std::string act;
  if (Status s = c.getString("hidden_act", "silu", act); !s)
    return s;
  if (act != "silu")
    return c.error("hidden_act", "is '" + act + "' — supported: 'silu'");
  if (Status s = c.getEpsilon("rms_norm_eps", f.defaultEps, h.eps); !s)
    return s;
  if (f.attnBiasKey)
    if (Status s = c.getBool("attention_bias", false, h.attnBias); !s)
      return s;
  if (f.mlpBiasKey)
    if (Status s = c.getBool("mlp_bias", false, h.mlpBias); !s)
      return s;
  if (Status s = c.getBool("tie_word_embeddings", false, h.tied); !s)
    return s;
  if (Status s = readRope(c, h); !s)
    return s;
  return readWindows(c, f, h);
}

} // namespace

Status buildLlamaFamily(HfGraph &g, const std::string &arch, LlmConfig &llm,
                        Value &logits) {
  const HfJson &c = g.config();
  Flavor f = flavorOf(arch);
  Hyper h;
  if (Status s = readHyper(c, f, h); !s)
    return s;
  llm.numLayers = h.layers;
  llm.hiddenSize = h.hidden;
  llm.numHeads = h.heads;
  llm.numKvHeads = h.kvHeads;
  llm.headDim = h.headDim;
  llm.vocabSize = h.vocab;
  llm.maxPositions = h.maxPos;

  OpBuilder &b = g.builder();
  const StepInputs &in = g.inputs();
  const int64_t E = h.hidden, Q = h.heads * h.headDim,
                KV = h.kvHeads * h.headDim, I = h.inter;
  Value embedTable = g.param("model.embed_tokens.weight", {h.vocab, E});
  Value x = g.embed("embed_tokens", embedTable, in.tokens);

  auto rope = [&](StringRef name, Value v, int64_t heads) {
    return g.build<graph::RopeOp>(
        name, g.f32(), v, in.positions, b.getI64IntegerAttr(heads),
        b.getI64IntegerAttr(h.headDim), b.getI64IntegerAttr(h.rotaryDim),
        b.getF64FloatAttr(h.theta), b.getStringAttr(h.scaling),
        b.getF64FloatAttr(h.factor), b.getF64FloatAttr(h.lowFreq),
        b.getF64FloatAttr(h.highFreq), b.getI64IntegerAttr(h.originalMaxPos));
  };

  for (int64_t i = 0; i < h.layers && !g.failed(); ++i) {
    std::string n = "layers." + std::to_string(i) + ".";
    std::string w = "model." + n;
    auto bias = [&](bool present, const std::string &key, int64_t size) {
      return present ? g.param(key, {size}) : Value();
    };

    Value normed = g.rmsNorm(n + "input_layernorm", x,
                             g.param(w + "input_layernorm.weight", {E}), h.eps);
    Value qw, kw, vw, qb, kb, vb;
    std::string attn = w + "self_attn.";
    bool qkvBias = f.qkvBias || h.attnBias;
    if (f.fused) {
      std::string qkv = attn + "qkv_proj.";
      int64_t ends[] = {0, Q, Q + KV, Q + 2 * KV};
      Value *ws[] = {&qw, &kw, &vw}, *bs[] = {&qb, &kb, &vb};
      for (int j = 0; j < 3; ++j) {
        *ws[j] =
            g.paramRows(qkv + "weight", {ends[3], E}, ends[j], ends[j + 1]);
        if (qkvBias)
          *bs[j] = g.paramRows(qkv + "bias", {ends[3]}, ends[j], ends[j + 1]);
      }
    } else {
      qw = g.param(attn + "q_proj.weight", {Q, E});
      kw = g.param(attn + "k_proj.weight", {KV, E});
      vw = g.param(attn + "v_proj.weight", {KV, E});
      qb = bias(qkvBias, attn + "q_proj.bias", Q);
      kb = bias(qkvBias, attn + "k_proj.bias", KV);
      vb = bias(qkvBias, attn + "v_proj.bias", KV);
    }
    Value q = g.linear(n + "self_attn.q_proj", normed, qw, qb, "nk");
    Value k = g.linear(n + "self_attn.k_proj", normed, kw, kb, "nk");
    Value v = g.linear(n + "self_attn.v_proj", normed, vw, vb, "nk");
    if (f.qkNorm) {
      q = g.headRmsNorm(n + "self_attn.q_norm", q,
                        g.param(attn + "q_norm.weight", {h.headDim}), h.heads,
                        h.eps);
      k = g.headRmsNorm(n + "self_attn.k_norm", k,
                        g.param(attn + "k_norm.weight", {h.headDim}),
                        h.kvHeads, h.eps);
    }
    q = rope(n + "self_attn.rope_q", q, h.heads);
    k = rope(n + "self_attn.rope_k", k, h.kvHeads);
    Value o = g.pagedAttention(n + "self_attn.attn", q, k, v, i, h.heads,
                               h.kvHeads, h.headDim,
                               1.0 / std::sqrt(double(h.headDim)), h.window[i]);
    Value ow = g.param(attn + "o_proj.weight", {E, Q});
    Value ob = bias(h.attnBias, attn + "o_proj.bias", E);
    o = g.linear(n + "self_attn.o_proj", o, ow, ob, "nk");
    x = g.add(n + "attn_residual", x, o);

    normed =
        g.rmsNorm(n + "post_attention_layernorm", x,
                  g.param(w + "post_attention_layernorm.weight", {E}), h.eps);
    std::string mlp = w + "mlp.";
    Value gw, uw, gb, ub;
    if (f.fused) {
      std::string gateUp = mlp + "gate_up_proj.";
      gw = g.paramRows(gateUp + "weight", {2 * I, E}, 0, I);
      uw = g.paramRows(gateUp + "weight", {2 * I, E}, I, 2 * I);
      if (h.mlpBias) {
        gb = g.paramRows(gateUp + "bias", {2 * I}, 0, I);
        ub = g.paramRows(gateUp + "bias", {2 * I}, I, 2 * I);
      }
    } else {
      gw = g.param(mlp + "gate_proj.weight", {I, E});
      uw = g.param(mlp + "up_proj.weight", {I, E});
      gb = bias(h.mlpBias, mlp + "gate_proj.bias", I);
      ub = bias(h.mlpBias, mlp + "up_proj.bias", I);
    }
    Value gate = g.linear(n + "mlp.gate_proj", normed, gw, gb, "nk");
    Value up = g.linear(n + "mlp.up_proj", normed, uw, ub, "nk");
    Value act = g.build<graph::SiluMulOp>(n + "mlp.act", g.f32(), gate, up);
    Value dw = g.param(mlp + "down_proj.weight", {E, I});
    Value db = bias(h.mlpBias, mlp + "down_proj.bias", E);
    Value down = g.linear(n + "mlp.down_proj", act, dw, db, "nk");
    x = g.add(n + "mlp_residual", x, down);
  }

  x = g.rmsNorm("norm", x, g.param("model.norm.weight", {E}), h.eps);
  Value rows = g.gatherRows("logits_rows", x, in.logitsIndices);
  if (h.tied) // transformers replaces a stored lm_head by the embedding
    g.ignoreTensor("lm_head.weight");
  Value head = h.tied ? embedTable : g.param("lm_head.weight", {h.vocab, E});
  logits = g.linear("lm_head", rows, head, Value(), "nk");
  return g.status();
}

} // namespace ingot::compiler::hf
