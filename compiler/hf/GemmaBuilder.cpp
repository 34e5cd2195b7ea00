//===- GemmaBuilder.cpp - Gemma 2 and 3 (text) into one engine step -------===//
//
// Gemma departs from the Llama layer in ways the Llama builder's flavours
// do not cover, so it gets its own loop (transformers' Gemma2/Gemma3
// DecoderLayer):
//   x = embed(tokens) · √hidden   (the scale rounded to the weights' dtype)
//   h = x + post_attn_norm(o_proj(attention(rope(q), rope(k), v)))
//                                                      on input_norm(x)
//   x = h + post_ffw_norm(down(gelu_tanh(gate(n)) · up(n))),
//                                           n = pre_ffw_norm(h)
// Every RMSNorm multiplies by (1 + weight), in f32; the attention scale is
// query_pre_attn_scalar^-½. Gemma 2 soft-caps the attention scores and the
// logits and slides on every other layer; Gemma 3 normalises each q/k head
// before rope, slides on five layers of six with its own rope base
// (rope_local_base_freq), and leaves both soft-caps off by default.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/HfGraph.h"

#include <bit>
#include <cmath>
#include <cstring>

using namespace mlir;

namespace ingot::compiler::hf {
namespace {

/// What the two generations' transformers configs differ in.
struct GemmaFlavor {
  bool gemma3;                // q/k norms, a local rope base
  int64_t slidingPattern;     // every Nth layer is full
  double finalSoftcap, attnSoftcap; // defaults when the key is absent
  double theta;               // rope_theta's default
};

GemmaFlavor flavorOf(llvm::StringRef arch) {
  if (arch == "Gemma2ForCausalLM")
    return {false, 2, 30.0, 50.0, 1e4};
  return {true, 6, 0.0, 0.0, 1e6};
}

struct GemmaHyper {
  int64_t layers, hidden, heads, kvHeads, headDim, inter, vocab, maxPos;
  double eps, theta, localTheta, queryScalar;
  std::string scaling = "none";
  double factor = 1;
  double finalSoftcap = 0, attnSoftcap = 0; // 0: none
  bool attnBias = false, tied = true;
  std::vector<int64_t> window; // per layer, 0 = full attention
};

/// A soft-cap: `dflt` when absent, off when null (as transformers reads
/// None), else the positive value.
Status readSoftcap(const HfJson &c, const char *key, double dflt,
                   double &out) {
  out = c.isNull(key) ? 0.0 : dflt;
  if (!c.has(key))
    return Status::ok();
  if (Status s = c.getDouble(key, out); !s)
    return s;
  return out > 0 ? Status::ok() : c.error(key, "must be positive or null");
}

/// layer_types, or the generation's pattern (Gemma 3's config may name it
/// sliding_window_pattern).
Status readLayerTypes(const HfJson &c, const GemmaFlavor &f, GemmaHyper &h) {
  int64_t window;
  if (Status s = c.getPositive("sliding_window", window); !s)
    return s;
  std::vector<std::string> types;
  if (Status s = c.getStringList("layer_types", types); !s)
    return s;
  if (types.empty()) {
    int64_t pattern = f.slidingPattern;
    if (f.gemma3)
      if (Status s = c.getInt("sliding_window_pattern", 6, pattern); !s)
        return s;
    if (pattern < 1)
      return c.error("sliding_window_pattern", "must be >= 1");
    for (int64_t i = 0; i < h.layers; ++i)
      types.push_back((i + 1) % pattern ? "sliding_attention"
                                        : "full_attention");
  }
  if (int64_t(types.size()) != h.layers)
    return c.error("layer_types", "has " + std::to_string(types.size()) +
                                      " entries for " +
                                      std::to_string(h.layers) + " layers");
  for (const std::string &t : types) {
    if (t != "sliding_attention" && t != "full_attention")
      return c.error("layer_types", "has '" + t +
                                        "' — supported: 'full_attention', "
                                        "'sliding_attention'");
    h.window.push_back(t == "sliding_attention" ? window : 0);
  }
  return Status::ok();
}

/// The global layers' rope_scaling: none or linear.
Status readScaling(const HfJson &c, GemmaHyper &h) {
  if (c.has("rope_parameters"))
    return c.error("rope_parameters",
                   "(per layer type) is not supported yet — give rope_theta, "
                   "rope_local_base_freq and rope_scaling");
  std::optional<HfJson> scaling;
  if (Status s = c.getObject("rope_scaling", scaling); !s)
    return s;
  if (!scaling)
    return Status::ok();
  const char *typeKey = scaling->has("rope_type") ? "rope_type" : "type";
  std::string type;
  if (Status s = scaling->getString(typeKey, "default", type); !s)
    return s;
  if (type == "default")
    return Status::ok();
  if (type != "linear")
    return scaling->error(typeKey, "is '" + type +
                                       "', which is not supported — "
                                       "supported: null, 'default', 'linear'");
  h.scaling = "linear";
  if (Status s = scaling->getDouble("factor", h.factor); !s)
    return s;
  return h.factor > 0 ? Status::ok()
                      : scaling->error("factor", "must be positive");
}

Status readGemmaHyper(const HfJson &c, const GemmaFlavor &f, GemmaHyper &h) {
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
                   "is not a multiple of num_key_value_heads");
  if (Status s = c.getSize("head_dim", 256, h.headDim); !s || h.headDim < 2)
    return s ? c.error("head_dim", "must be >= 2") : s;
  std::string act;
  if (Status s = c.getString("hidden_activation", "gelu_pytorch_tanh", act); !s)
    return s;
  if (act != "gelu_pytorch_tanh")
    return c.error("hidden_activation",
                   "is '" + act + "' — supported: 'gelu_pytorch_tanh'");
  if (Status s = readSoftcap(c, "attn_logit_softcapping", f.attnSoftcap,
                             h.attnSoftcap);
      !s)
    return s;
  if (Status s = readSoftcap(c, "final_logit_softcapping", f.finalSoftcap,
                             h.finalSoftcap);
      !s)
    return s;
  if (Status s = c.getEpsilon("rms_norm_eps", 1e-6, h.eps); !s)
    return s;
  if (Status s = c.getDouble("rope_theta", f.theta, h.theta); !s)
    return s;
  h.localTheta = h.theta; // Gemma 2: one rope for every layer
  if (f.gemma3)
    if (Status s = c.getDouble("rope_local_base_freq", 1e4, h.localTheta); !s)
      return s;
  if (Status s = c.getDouble("query_pre_attn_scalar", 256, h.queryScalar); !s)
    return s;
  if (!(h.eps > 0) || !(h.theta > 0) || !(h.localTheta > 0) ||
      !(h.queryScalar > 0))
    return c.error("rms_norm_eps", "rope_theta, rope_local_base_freq and "
                                   "query_pre_attn_scalar must be positive");
  if (Status s = c.getBool("attention_bias", false, h.attnBias); !s)
    return s;
  if (Status s = c.getBool("tie_word_embeddings", true, h.tied); !s)
    return s;
  if (Status s = readScaling(c, h); !s)
    return s;
  return readLayerTypes(c, f, h);
}

/// √hidden as transformers applies it: a buffer cast to the embedding's
/// dtype before the multiply.
double embedScale(int64_t hidden, Type elem) {
  float f = std::sqrt(float(hidden));
  if (elem.isBF16()) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u; // round to nearest even
    return std::bit_cast<float>(u);
  }
  if (elem.isF16())
    return f16BitsToFloat(floatToF16Bits(f));
  return f;
}

/// Builds one Gemma layer's attention half onto the residual stream x.
Value attentionHalf(HfGraph &g, const GemmaFlavor &f, const GemmaHyper &h,
                    int64_t i, Value x) {
  OpBuilder &b = g.builder();
  const int64_t E = h.hidden, D = h.headDim, Q = h.heads * D,
                KV = h.kvHeads * D;
  const std::string n = "layers." + std::to_string(i) + ".";
  const std::string w = "model." + n, attn = w + "self_attn.";
  auto proj = [&](const char *p, Value v, int64_t out, int64_t inDim) {
    Value bias = h.attnBias ? g.param(attn + p + ".bias", {out}) : Value();
    return g.linear(n + "self_attn." + p, v,
                    g.param(attn + p + ".weight", {out, inDim}), bias, "nk");
  };
  Value normed = g.rmsNorm(n + "input_layernorm", x,
                           g.paramPlusOne(w + "input_layernorm.weight", {E}),
                           h.eps);
  Value q = proj("q_proj", normed, Q, E), k = proj("k_proj", normed, KV, E);
  Value v = proj("v_proj", normed, KV, E);
  if (f.gemma3) {
    q = g.headRmsNorm(n + "self_attn.q_norm", q,
                      g.paramPlusOne(attn + "q_norm.weight", {D}), h.heads,
                      h.eps);
    k = g.headRmsNorm(n + "self_attn.k_norm", k,
                      g.paramPlusOne(attn + "k_norm.weight", {D}), h.kvHeads,
                      h.eps);
  }
  // Gemma 3's sliding layers rotate on their own base, unscaled.
  const bool local = f.gemma3 && h.window[i] > 0;
  auto rope = [&](StringRef name, Value t, int64_t heads) {
    return g.build<graph::RopeOp>(
        name, g.f32(), t, g.inputs().positions, b.getI64IntegerAttr(heads),
        b.getI64IntegerAttr(D), b.getI64IntegerAttr(D),
        b.getF64FloatAttr(local ? h.localTheta : h.theta),
        b.getStringAttr(local ? "none" : h.scaling),
        b.getF64FloatAttr(h.factor), b.getF64FloatAttr(1.0),
        b.getF64FloatAttr(1.0), b.getI64IntegerAttr(0));
  };
  q = rope(n + "self_attn.rope_q", q, h.heads);
  k = rope(n + "self_attn.rope_k", k, h.kvHeads);
  Value o = g.pagedAttention(n + "self_attn.attn", q, k, v, i, h.heads,
                             h.kvHeads, D, 1.0 / std::sqrt(h.queryScalar),
                             h.window[i], h.attnSoftcap);
  o = proj("o_proj", o, E, Q);
  o = g.rmsNorm(n + "post_attention_layernorm", o,
                g.paramPlusOne(w + "post_attention_layernorm.weight", {E}),
                h.eps);
  return g.add(n + "attn_residual", x, o);
}

/// And its MLP half: down(gelu_tanh(gate) · up) between two norms.
Value mlpHalf(HfGraph &g, const GemmaHyper &h, int64_t i, Value x) {
  const int64_t E = h.hidden, I = h.inter;
  const std::string n = "layers." + std::to_string(i) + ".";
  const std::string w = "model." + n, mlp = w + "mlp.";
  auto norm = [&](const char *which, Value v) {
    return g.rmsNorm(n + which, v,
                     g.paramPlusOne(w + which + ".weight", {E}), h.eps);
  };
  auto linear = [&](const char *p, Value v, int64_t out, int64_t inDim) {
    return g.linear(n + "mlp." + p, v,
                    g.param(mlp + p + ".weight", {out, inDim}), Value(), "nk");
  };
  Value normed = norm("pre_feedforward_layernorm", x);
  Value act = g.build<graph::GeluOp>(
      n + "mlp.act", g.f32(), linear("gate_proj", normed, I, E),
      g.builder().getStringAttr("tanh"));
  act = g.build<graph::MulOp>(n + "mlp.act_mul", g.f32(), act,
                              linear("up_proj", normed, I, E));
  Value down = norm("post_feedforward_layernorm",
                    linear("down_proj", act, E, I));
  return g.add(n + "mlp_residual", x, down);
}

} // namespace

Status buildGemma(HfGraph &g, const std::string &arch, LlmConfig &llm,
                  Value &logits) {
  const GemmaFlavor f = flavorOf(arch);
  GemmaHyper h;
  if (Status s = readGemmaHyper(g.config(), f, h); !s)
    return s;
  llm.numLayers = h.layers;
  llm.hiddenSize = h.hidden;
  llm.numHeads = h.heads;
  llm.numKvHeads = h.kvHeads;
  llm.headDim = h.headDim;
  llm.vocabSize = h.vocab;
  llm.maxPositions = h.maxPos;

  const int64_t E = h.hidden;
  Value table = g.param("model.embed_tokens.weight", {h.vocab, E});
  Type embedType =
      table ? cast<RankedTensorType>(table.getType()).getElementType() : Type();
  Value x = g.scale("embed_scale",
                    g.embed("embed_tokens", table, g.inputs().tokens),
                    table ? embedScale(E, embedType) : 1.0);
  for (int64_t i = 0; i < h.layers && !g.failed(); ++i)
    x = mlpHalf(g, h, i, attentionHalf(g, f, h, i, x));
  x = g.rmsNorm("norm", x, g.paramPlusOne("model.norm.weight", {E}), h.eps);
  Value rows = g.gatherRows("logits_rows", x, g.inputs().logitsIndices);
  if (h.tied) // transformers replaces a stored lm_head by the embedding
    g.ignoreTensor("lm_head.weight");
  Value head = h.tied ? table : g.param("lm_head.weight", {h.vocab, E});
  logits = g.linear("lm_head", rows, head, Value(), "nk");
  if (h.finalSoftcap > 0)
    logits = g.softcap("final_logit_softcapping", logits, h.finalSoftcap);
  return g.status();
}

} // namespace ingot::compiler::hf
