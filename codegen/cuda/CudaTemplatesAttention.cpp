//===- CudaTemplatesAttention.cpp - RoPE and paged-attention instances ----===//
//
// paged_attention and rope_paged_attention become two launches: the first
// writes every token's K and V rows into the cache (rotating K), the second
// attends, so that a prefill's queries see all earlier keys of the same
// step. The cache geometry (layout, block size) comes from the compile
// options, as the manifest records it; the layer's cache arrays are
// arguments the runtime passes (GpuArg KvKeys/KvValues).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTemplateStep.h"

namespace ingot::codegen::detail {
namespace {

bool isIndex(const std::string &type) {
  return type == "ingot_k::i64" || type == "ingot_k::i32";
}

/// The RopeParams initializer from the step's rope attributes; empty for
/// a scaling the template does not know.
std::string ropeParams(const TemplateStep &s) {
  const std::string scaling = s.strAttr("scaling", "none");
  const int kind = scaling == "none"     ? 0
                   : scaling == "linear" ? 1
                   : scaling == "llama3" ? 2
                                         : -1;
  if (kind < 0)
    return "";
  // The defaults of an absent attribute are the CPU kernel's (Rope.cpp).
  return "ingot_k::RopeParams{" + std::to_string(kind) + ", " +
         doubleLiteral(s.floatAttr("theta", 10000.0)) + ", " +
         doubleLiteral(s.floatAttr("factor", 8.0)) + ", " +
         doubleLiteral(s.floatAttr("low_freq_factor", 1.0)) + ", " +
         doubleLiteral(s.floatAttr("high_freq_factor", 4.0)) + ", " +
         doubleLiteral(s.floatAttr("original_max_positions", 8192.0)) + "}";
}

} // namespace

/// rope (x, positions) -> y: one thread per rotary pair.
std::optional<TemplateInstance> instantiateRope(const TemplateStep &s,
                                                const std::string &symbol,
                                                std::string *whyNot) {
  const int64_t heads = s.intAttr("num_heads", 0), d = s.intAttr("head_dim", 0);
  const int64_t rotary = s.intAttr("rotary_dim", d);
  const std::string rope = ropeParams(s);
  if (s.numInputs() != 2 || s.elementType(0) != "float" ||
      !isIndex(s.elementType(1)) || heads <= 0 || d <= 0 || rope.empty())
    return refuse(whyNot, "the rope template takes f32 rows, i32/i64 "
                          "positions and scaling none, linear or llama3");
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = 256;
  l.grid = {{0, 2 * 256, 1}};
  l.args = {
      pointerArg(0), pointerArg(1), pointerArg(2), {GpuArgKind::Numel, 0, 0}};
  inst.source = wrapperHead(symbol, 256,
                            {pointerParam(s, 0), pointerParam(s, 1),
                             pointerParam(s, 2), "ingot_k::i64 numel"}) +
                " {\n  ingot_k::rope<" + std::to_string(heads) + ", " +
                std::to_string(d) + ", " + std::to_string(rotary) + ", " +
                s.elementType(1) + ">(p0, p1, p2, " + rope + ", numel / " +
                std::to_string(heads * d) + "LL);\n}\n";
  return inst;
}

std::optional<TemplateInstance>
instantiateAttention(const TemplateStep &s, const std::string &symbol,
                     const TemplateOptions &options, std::string *whyNot) {
  constexpr int64_t kWarps = 4;
  // q, k, v, positions, slot_mapping, block_tables, query_ends -> out
  const bool rotate = s.op().getKernel() == "rope_paged_attention";
  const int64_t heads = s.intAttr("num_heads", 0),
                kvHeads = s.intAttr("num_kv_heads", 0),
                d = s.intAttr("head_dim", 0);
  const int64_t rotary = rotate ? s.intAttr("rotary_dim", d) : 0;
  const std::string rope = rotate ? ropeParams(s) : "ingot_k::RopeParams{}";
  const std::string index = s.elementType(3), table = s.elementType(5);
  bool ok = s.numInputs() == 7 && heads > 0 && kvHeads > 0 && d > 0 &&
            d <= 256 && heads % kvHeads == 0 && !rope.empty() &&
            isIndex(index) && isIndex(table) && s.elementType(4) == index &&
            s.elementType(6) == index;
  for (size_t i : {0, 1, 2, 7})
    ok = ok && s.elementType(i) == "float" && s.type(i).getRank() == 2 &&
         s.dim(i, 1) > 0;
  if (!ok)
    return refuse(whyNot, "the attention template takes f32 [tokens, width] "
                          "q/k/v/out, i32/i64 indices and head_dim <= 256");
  const bool headMajor = options.kvLayout == "block,head,token,dim";
  const int64_t bs = options.kvBlockSize;
  std::string a = "  ingot_k::AttnArgs a{};\n";
  auto set = [&](const char *field, const std::string &value) {
    a += std::string("  a.") + field + " = " + value + ";\n";
  };
  set("blockSize", std::to_string(bs));
  set("blockFloats", std::to_string(bs * kvHeads * d));
  set("headStride", std::to_string(headMajor ? bs * d : d));
  set("rowStride", std::to_string(headMajor ? d : kvHeads * d));
  set("qStride", std::to_string(s.dim(0, 1)));
  set("kStride", std::to_string(s.dim(1, 1)));
  set("vStride", std::to_string(s.dim(2, 1)));
  set("qOffset", std::to_string(s.intAttr("q_offset", 0)));
  set("kOffset", std::to_string(s.intAttr("k_offset", 0)));
  set("vOffset", std::to_string(s.intAttr("v_offset", 0)));
  set("outStride", std::to_string(s.dim(7, 1)));
  set("scale", floatLiteral(s.floatAttr("scale", 1.0)));
  set("softcap", floatLiteral(s.floatAttr("softcap", 0.0)));
  set("window", std::to_string(s.intAttr("sliding_window", 0)));
  const int64_t layer = s.intAttr("layer", 0);
  const std::string dims = std::to_string(kvHeads) + ", " + std::to_string(d) +
                           ", " + std::to_string(rotary);

  TemplateInstance inst;
  TemplateLaunch &w = inst.launches.emplace_back();
  w.symbol = symbol + "_kv", w.blockSize = 128;
  w.grid = {{3, 1, 1}};
  w.args = {pointerArg(1),
            pointerArg(2),
            pointerArg(3),
            pointerArg(4),
            {GpuArgKind::KvKeys, 0, layer},
            {GpuArgKind::KvValues, 0, layer},
            {GpuArgKind::Numel, 3, 0}};
  inst.source =
      wrapperHead(w.symbol, 128,
                  {pointerParam(s, 1), pointerParam(s, 2), pointerParam(s, 3),
                   pointerParam(s, 4), "float *keys", "float *values",
                   "ingot_k::i64 tokens"}) +
      " {\n" + a + "  ingot_k::pagedKvWrite<" + dims + ", " + index +
      ">(p1, p2, p3, p4, keys, values, a, " + rope + ", tokens);\n}\n";

  TemplateLaunch &r = inst.launches.emplace_back();
  r.symbol = symbol, r.blockSize = kWarps * 32;
  r.grid = {{-1, 1, heads}, {3, 1, 1}};
  r.args = {pointerArg(0),
            pointerArg(3),
            pointerArg(5),
            pointerArg(6),
            {GpuArgKind::KvKeys, 0, layer},
            {GpuArgKind::KvValues, 0, layer},
            pointerArg(7),
            {GpuArgKind::Numel, 3, 0},
            {GpuArgKind::Numel, 6, 0},
            {GpuArgKind::Dim, 5, 1}};
  inst.source += wrapperHead(symbol, r.blockSize,
                             {pointerParam(s, 0), pointerParam(s, 3),
                              pointerParam(s, 5), pointerParam(s, 6),
                              "const float *keys", "const float *values",
                              pointerParam(s, 7), "ingot_k::i64 tokens",
                              "ingot_k::i64 seqs", "ingot_k::i64 tableWidth"}) +
                 " {\n" + a + "  a.tableWidth = tableWidth;\n" +
                 "  ingot_k::pagedAttention<" + std::to_string(heads) + ", " +
                 dims + ", " + std::to_string(kWarps) + ", " + index + ", " +
                 table + ">(p0, p3, p5, p6, keys, values, p7, a, " + rope +
                 ", tokens, seqs);\n}\n";
  return inst;
}

} // namespace ingot::codegen::detail
