//===- Gpt2Builder.cpp - GPT-2 into one engine step -----------------------===//
//
// GPT-2 differs from the Llama family in every layer: learned absolute
// positions (wpe) instead of rotary, layer_norm with bias, a gelu MLP, and
// Conv1D weights stored [in, out] ("kn"). Its fused c_attn weight [E, 3E] is
// split by column into q, k and v params, streamed row by row, so each
// linear reads one weight and attention needs no split op.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/HfGraph.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace ingot::compiler::hf {
namespace {

struct Gpt2Hyper {
  int64_t layers, hidden, heads, inner, vocab, positions;
  double eps;
  std::string approximate;
  bool scaleWeights, scaleByLayer, tied;
};

Status readHyper(const HfJson &c, Gpt2Hyper &h) {
  for (auto [key, out] : {std::pair{"n_layer", &h.layers},
                          {"n_embd", &h.hidden},
                          {"n_head", &h.heads},
                          {"vocab_size", &h.vocab},
                          {"n_positions", &h.positions}})
    if (Status s = c.getSize(key, *out); !s)
      return s;
  if (h.hidden % h.heads)
    return c.error("n_embd",
                   llvm::formatv("({0}) is not divisible by n_head ({1})",
                                 h.hidden, h.heads)
                       .str());
  if (c.has("n_inner")) {
    if (Status s = c.getSize("n_inner", h.inner); !s)
      return s;
  } else {
    h.inner = 4 * h.hidden;
  }
  if (Status s = c.getEpsilon("layer_norm_epsilon", 1e-5, h.eps); !s)
    return s;
  std::string act;
  if (Status s = c.getString("activation_function", "gelu_new", act); !s)
    return s;
  // gelu_new and gelu_pytorch_tanh are the same tanh approximation.
  if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    h.approximate = "tanh";
  else if (act == "gelu")
    h.approximate = "none";
  else
    return c.error("activation_function",
                   "is '" + act +
                       "' — supported: 'gelu_new', 'gelu_pytorch_tanh', "
                       "'gelu'");
  if (Status s = c.getBool("scale_attn_weights", true, h.scaleWeights); !s)
    return s;
  if (Status s =
          c.getBool("scale_attn_by_inverse_layer_idx", false, h.scaleByLayer);
      !s)
    return s;
  return c.getBool("tie_word_embeddings", true, h.tied);
}

} // namespace

Status buildGpt2(HfGraph &g, const std::string &arch, LlmConfig &llm,
                 Value &logits) {
  (void)arch;
  const HfJson &c = g.config();
  Gpt2Hyper h;
  if (Status s = readHyper(c, h); !s)
    return s;
  const int64_t E = h.hidden, F = h.inner, D = h.hidden / h.heads;
  llm.numLayers = h.layers;
  llm.hiddenSize = E;
  llm.numHeads = h.heads;
  llm.numKvHeads = h.heads;
  llm.headDim = D;
  llm.vocabSize = h.vocab;
  llm.maxPositions = h.positions;

  // save_pretrained of GPT2LMHeadModel prefixes "transformer."; the original
  // openai-community checkpoints do not.
  std::string p = g.hasTensor("transformer.wte.weight") ? "transformer." : "";
  OpBuilder &b = g.builder();
  const StepInputs &in = g.inputs();

  Value wte = g.param(p + "wte.weight", {h.vocab, E});
  Value tok = g.embed("wte", wte, in.tokens);
  Value pos =
      g.embed("wpe", g.param(p + "wpe.weight", {h.positions, E}), in.positions);
  Value x = g.add("embed", tok, pos);

  for (int64_t i = 0; i < h.layers && !g.failed(); ++i) {
    std::string n = "layers." + std::to_string(i) + ".";
    std::string w = p + "h." + std::to_string(i) + ".";
    // Weight before bias, in statements of their own: the params' order in
    // the IR (and so in the artifact) must not depend on the C++ compiler's
    // argument evaluation order.
    auto ln = [&](const std::string &name, Value v) {
      Value weight = g.param(w + name + ".weight", {E});
      Value bias = g.param(w + name + ".bias", {E});
      return g.layerNorm(n + name, v, weight, bias, h.eps);
    };
    auto conv1d = [&](const std::string &name, Value v, int64_t in,
                      int64_t out) {
      Value weight = g.param(w + name + ".weight", {in, out});
      Value bias = g.param(w + name + ".bias", {out});
      return g.linear(n + name, v, weight, bias, "kn");
    };

    Value normed = ln("ln_1", x);
    std::string cattn = w + "attn.c_attn.";
    Value qkv[3];
    const char *names[] = {"q", "k", "v"};
    for (int j = 0; j < 3; ++j) {
      Value weight =
          g.paramCols(cattn + "weight", {E, 3 * E}, j * E, (j + 1) * E);
      Value bias = g.paramRows(cattn + "bias", {3 * E}, j * E, (j + 1) * E);
      qkv[j] =
          g.linear(n + "attn.c_attn." + names[j], normed, weight, bias, "kn");
    }
    double scale = h.scaleWeights ? 1.0 / std::sqrt(double(D)) : 1.0;
    if (h.scaleByLayer)
      scale /= double(i + 1);
    Value o = g.pagedAttention(n + "attn.attn", qkv[0], qkv[1], qkv[2], i,
                               h.heads, h.heads, D, scale, 0);
    o = conv1d("attn.c_proj", o, E, E);
    x = g.add(n + "attn_residual", x, o);

    normed = ln("ln_2", x);
    Value hid = conv1d("mlp.c_fc", normed, E, F);
    hid = g.build<graph::GeluOp>(n + "mlp.act", g.f32(), hid,
                                 b.getStringAttr(h.approximate));
    hid = conv1d("mlp.c_proj", hid, F, E);
    x = g.add(n + "mlp_residual", x, hid);
  }

  Value lnfWeight = g.param(p + "ln_f.weight", {E});
  Value lnfBias = g.param(p + "ln_f.bias", {E});
  x = g.layerNorm("ln_f", x, lnfWeight, lnfBias, h.eps);
  Value rows = g.gatherRows("logits_rows", x, in.logitsIndices);
  // wte is [vocab, E], a torch Linear layout, unlike the Conv1D weights.
  if (h.tied) // transformers replaces a stored lm_head by the embedding
    g.ignoreTensor("lm_head.weight");
  Value head = h.tied ? wte : g.param("lm_head.weight", {h.vocab, E});
  logits = g.linear("lm_head", rows, head, Value(), "nk");
  return g.status();
}

} // namespace ingot::compiler::hf
