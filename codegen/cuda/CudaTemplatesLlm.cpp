//===- CudaTemplatesLlm.cpp - Norm, activation, gather, linear instances --===//
//
// Each function checks what its template supports (f32 activations; f32,
// f16 or bf16 weights; static feature dims) and refuses anything else with
// the reason, so the step stays without a CUDA kernel rather than getting a
// wrong one. Launch shapes are the templates' own (see each .cuh header).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTemplateStep.h"

namespace ingot::codegen::detail {
namespace {

bool isFloatWeight(const std::string &type) {
  return type == "float" || type == "ingot_k::Bf16" || type == "ingot_k::F16";
}

bool hasInput(const TemplateStep &s, size_t i) {
  return i < s.numInputs() && s.present(i);
}

/// "p<i>" for a given input, "nullptr" for an absent or trailing one.
std::string inputOrNull(const TemplateStep &s, size_t i) {
  return hasInput(s, i) ? "p" + std::to_string(i) : "nullptr";
}

/// Parameters and pointer arguments for every present operand.
void pointers(const TemplateStep &s, std::vector<std::string> *params,
              std::vector<GpuArgSpec> *args) {
  for (size_t i = 0; i < s.numOperands(); ++i)
    if (s.present(i)) {
      params->push_back(pointerParam(s, i));
      args->push_back(pointerArg(i));
    }
}

} // namespace

/// rms_norm (x, w) -> y and add_rms_norm (a, b, w) -> (sum, y): one block
/// per row of H values.
std::optional<TemplateInstance> instantiateNorm(const TemplateStep &s,
                                                const std::string &symbol,
                                                std::string *whyNot) {
  const bool add = s.op().getKernel() == "add_rms_norm";
  const size_t w = add ? 2 : 1;
  if (s.numInputs() != w + 1 || s.elementType(0) != "float" ||
      !isFloatWeight(s.elementType(w)))
    return refuse(whyNot, "the norm template takes f32 rows and an f32, f16 "
                          "or bf16 weight");
  const int64_t h = s.dim(w, 0);
  if (h <= 0 || s.type(0).getRank() < 1 ||
      s.dim(0, s.type(0).getRank() - 1) != h)
    return refuse(whyNot, "the norm's row width is not static");
  const int64_t block = warpMultiple(h, 256);
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = block;
  l.grid = {{0, h, 1}};
  std::vector<std::string> params;
  pointers(s, &params, &l.args);
  const std::string eps = floatLiteral(s.floatAttr("epsilon", 1e-5));
  const std::string call =
      add ? "p0, p1, p2, p3, p4" : "p0, nullptr, p1, nullptr, p2";
  inst.source = wrapperHead(symbol, block, params) + " {\n  ingot_k::rmsNorm<" +
                std::to_string(h) + ", " + std::to_string(block) + ", " +
                s.elementType(w) + ">(" + call + ", " + eps + ");\n}\n";
  return inst;
}

/// silu_mul (gate[, up]) -> y and gelu (x) -> y: one thread per output.
std::optional<TemplateInstance> instantiateActivation(const TemplateStep &s,
                                                      const std::string &symbol,
                                                      std::string *whyNot) {
  const bool silu = s.op().getKernel() == "silu_mul";
  for (size_t i = 0; i < s.numOperands(); ++i)
    if (s.present(i) && s.elementType(i) != "float")
      return refuse(whyNot, "the activation templates take f32 tensors");
  const size_t out = s.numInputs();
  const int64_t width =
      s.type(out) ? s.dim(out, s.type(out).getRank() - 1) : -1;
  if (width <= 0)
    return refuse(whyNot, "the activation's feature dim is not static");
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = 256, l.gridOperand = int64_t(out);
  std::vector<std::string> params;
  pointers(s, &params, &l.args);
  params.push_back("ingot_k::i64 n");
  l.args.push_back({GpuArgKind::Numel, int64_t(out), 0});
  std::string call;
  if (silu && !hasInput(s, 1) && s.overlaps(0, out)) {
    // y over the packed gate: one block, rows in order (activation.cuh).
    l.grid = {{-1, 1, 1}};
    call = "ingot_k::siluMulPackedInPlace<" + std::to_string(width) +
           ", 256>(p0, p" + std::to_string(out) + ", n / " +
           std::to_string(width) + "LL)";
  } else if (silu)
    call = "ingot_k::siluMul<" + std::to_string(width) + ">(p0, " +
           inputOrNull(s, 1) + ", p" + std::to_string(out) + ", n)";
  else
    call = std::string("ingot_k::gelu<") +
           (s.strAttr("approximate", "none") == "tanh" ? "true" : "false") +
           ">(p0, p1, n)";
  inst.source = wrapperHead(symbol, 256, params) + " {\n  " + call + ";\n}\n";
  return inst;
}

/// gather of embedding rows: a 2-D table along axis 0 -> one block per id.
std::optional<TemplateInstance> instantiateGather(const TemplateStep &s,
                                                  const std::string &symbol,
                                                  std::string *whyNot) {
  const std::string table = s.elementType(0), out = s.elementType(2);
  // f32 out of any float table, or 16-bit rows kept as they are (the CPU
  // gather keeps a 16-bit table's dtype; a cast step follows).
  const bool keep16 = table == out && table != "float";
  if (s.numInputs() != 2 || s.intAttr("axis", 0) != 0 || !s.type(0) ||
      s.type(0).getRank() != 2 || !isFloatWeight(table) ||
      (out != "float" && !keep16))
    return refuse(whyNot, "the gather template takes rows of a 2-D f32, f16 "
                          "or bf16 table along axis 0");
  const std::string index = s.elementType(1);
  const int64_t vocab = s.dim(0, 0), d = s.dim(0, 1);
  if ((index != "ingot_k::i64" && index != "ingot_k::i32") || d <= 0)
    return refuse(whyNot, "the gather needs i32/i64 ids and static rows");
  const int64_t block = warpMultiple(d, 256);
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = block;
  l.grid = {{1, 1, 1}};
  std::vector<std::string> params;
  pointers(s, &params, &l.args);
  // A table of activations (the rows whose logits are wanted) has as many
  // rows as the step has tokens: the runtime passes the count.
  std::string rows = std::to_string(vocab) + "LL";
  if (vocab < 0) {
    params.push_back("ingot_k::i64 rows");
    l.args.push_back({GpuArgKind::Dim, 0, 0});
    rows = "rows";
  }
  const std::string shape = std::to_string(d) + ", " + std::to_string(block);
  if (keep16) {
    const std::string u16 = "ingot_k::u16 *";
    inst.source = wrapperHead(symbol, block, params) +
                  " {\n  ingot_k::gatherRows16<" + shape + ", " + index +
                  ">(reinterpret_cast<const " + u16 + ">(p0), p1, " +
                  "reinterpret_cast<" + u16 + ">(p2), " + rows + ", " +
                  (table == "ingot_k::F16" ? "0x7e00" : "0x7fc0") + ");\n}\n";
    return inst;
  }
  inst.source = wrapperHead(symbol, block, params) +
                " {\n  ingot_k::embeddingRows<" + shape + ", " + table + ", " +
                index + ">(p0, p1, p2, " + rows + ");\n}\n";
  return inst;
}

/// cast of f16/bf16 (or f32) to f32: one thread per element.
std::optional<TemplateInstance> instantiateCast(const TemplateStep &s,
                                                const std::string &symbol,
                                                std::string *whyNot) {
  if (s.numInputs() != 1 || !isFloatWeight(s.elementType(0)) ||
      s.elementType(1) != "float")
    return refuse(whyNot, "the cast template widens f16 or bf16 to f32");
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = 256, l.gridOperand = 1;
  l.args = {pointerArg(0), pointerArg(1), {GpuArgKind::Numel, 1, 0}};
  inst.source =
      wrapperHead(symbol, 256,
                  {pointerParam(s, 0), pointerParam(s, 1), "ingot_k::i64 n"}) +
      " {\n  ingot_k::castToF32<" + s.elementType(0) + ">(p0, p1, n);\n}\n";
  return inst;
}

/// linear (x, w[, bias][, residual]) -> y: one warp per output column,
/// kMt rows per warp; the weight's layout and dtype are template arguments.
std::optional<TemplateInstance> instantiateLinear(const TemplateStep &s,
                                                  const std::string &symbol,
                                                  std::string *whyNot) {
  constexpr int64_t kWarps = 4, kMt = 4;
  const std::string w = s.elementType(1);
  if (s.numInputs() < 2 || s.elementType(0) != "float" || !isFloatWeight(w) ||
      s.type(1).getRank() != 2)
    return refuse(whyNot, "the linear template takes f32 activations and a "
                          "2-D f32, f16 or bf16 weight (quantised weights "
                          "have no CUDA kernel yet)");
  if (s.numInputs() > 4 || (hasInput(s, 2) && s.elementType(2) != w) ||
      (hasInput(s, 3) && s.elementType(3) != "float"))
    return refuse(whyNot, "the linear template takes a bias of the weight's "
                          "dtype and an f32 residual");
  const std::string layout = s.strAttr("w_layout", "nk");
  const bool kn = layout == "kn";
  const int64_t n = kn ? s.dim(1, 1) : s.dim(1, 0);
  const int64_t k = kn ? s.dim(1, 0) : s.dim(1, 1);
  const int64_t act = activationIndex(s);
  if (act < 0 || n <= 0 || k <= 0 ||
      (layout != "nk" && layout != "kn" && layout != "nk16"))
    return refuse(whyNot, "unknown activation or weight layout '" + layout +
                              "' for the linear template");
  const std::string wl = kn ? "Kn" : (layout == "nk16" ? "Nk16" : "Nk");
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = kWarps * 32;
  l.grid = {{-1, 1, (n + kWarps - 1) / kWarps}, {0, k * kMt, 1}};
  std::vector<std::string> params;
  pointers(s, &params, &l.args);
  params.push_back("ingot_k::i64 numel");
  l.args.push_back({GpuArgKind::Numel, 0, 0});
  const std::string out = "p" + std::to_string(s.numInputs());
  inst.source = wrapperHead(symbol, l.blockSize, params) +
                " {\n  ingot_k::linear<" + std::to_string(k) + ", " +
                std::to_string(n) + ", " + w + ", ingot_k::WLayout::" + wl +
                ", " + std::to_string(kWarps) + ", " + std::to_string(kMt) +
                ", " + std::to_string(act) + ">(p0, p1, " + inputOrNull(s, 2) +
                ", " + inputOrNull(s, 3) + ", " + out + ", numel / " +
                std::to_string(k) + "LL);\n}\n";
  return inst;
}

} // namespace ingot::codegen::detail
