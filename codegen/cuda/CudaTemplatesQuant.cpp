//===- CudaTemplatesQuant.cpp - Linear and gather on quantised weights ----===//
//
// A quantised weight (q8, q4, q4m blocks along K: format/include/ingot/
// Quant.h) keeps the logical f32 memref type in the plan; its plan.param's
// `quant` and `group` say how its bytes are laid out, and the templates of
// quant.cuh decode them in registers (weight-only: activations stay f32, as
// on the CPU). fp8 weights have no template yet.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTemplateStep.h"

namespace ingot::codegen::detail {
namespace {

/// "ingot_k::QFormat::Q4M" for a format quant.cuh decodes, else "".
std::string qformat(const std::string &quant) {
  if (quant == "q8")
    return "ingot_k::QFormat::Q8";
  if (quant == "q4")
    return "ingot_k::QFormat::Q4";
  if (quant == "q4m")
    return "ingot_k::QFormat::Q4M";
  return "";
}

bool isFloat(const std::string &type) {
  return type == "float" || type == "ingot_k::Bf16" || type == "ingot_k::F16";
}

} // namespace

/// linear (x, w@quant[, bias][, residual]) -> y: as the float template,
/// one warp per output column decoding its row once for kMt rows.
std::optional<TemplateInstance>
instantiateQuantLinear(const TemplateStep &s, const std::string &symbol,
                       std::string *whyNot) {
  constexpr int64_t kWarps = 4, kMt = 4;
  int64_t group = 0;
  const std::string format = qformat(s.quantFormat(1, &group));
  const bool hasBias = s.numInputs() > 2 && s.present(2);
  const bool hasResidual = s.numInputs() > 3 && s.present(3);
  const std::string bias = hasBias ? s.elementType(2) : "float";
  if (format.empty() || group < 1 || s.numInputs() > 4 ||
      s.elementType(0) != "float" || s.type(1).getRank() != 2 ||
      s.strAttr("w_layout", "nk") != "nk" || !isFloat(bias) ||
      (hasResidual && s.elementType(3) != "float"))
    return refuse(whyNot, "the quantised linear template takes f32 "
                          "activations and q8/q4/q4m [N, K] weights");
  const int64_t act = activationIndex(s);
  const int64_t n = s.dim(1, 0), k = s.dim(1, 1);
  if (act < 0 || n <= 0 || k <= 0)
    return refuse(whyNot, "unknown activation for the quantised linear");
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = kWarps * 32;
  l.grid = {{-1, 1, (n + kWarps - 1) / kWarps}, {0, k * kMt, 1}};
  std::vector<std::string> params;
  for (size_t i = 0; i < s.numOperands(); ++i)
    if (s.present(i)) {
      params.push_back(pointerParam(s, i));
      l.args.push_back(pointerArg(i));
    }
  params.push_back("ingot_k::i64 numel");
  l.args.push_back({GpuArgKind::Numel, 0, 0});
  const std::string out = "p" + std::to_string(s.numInputs());
  inst.source = wrapperHead(symbol, l.blockSize, params) +
                " {\n  ingot_k::linearQuant<" + std::to_string(k) + ", " +
                std::to_string(n) + ", " + format + ", " +
                std::to_string(group) + ", " + std::to_string(kWarps) + ", " +
                std::to_string(kMt) + ", " + std::to_string(act) + ", " + bias +
                ">(p0, p1, " + (hasBias ? "p2" : "nullptr") + ", " +
                (hasResidual ? "p3" : "nullptr") + ", " + out + ", numel / " +
                std::to_string(k) + "LL);\n}\n";
  return inst;
}

/// gather of quantised embedding rows, decoded to f32 (the CPU's form).
std::optional<TemplateInstance>
instantiateQuantGather(const TemplateStep &s, const std::string &symbol,
                       std::string *whyNot) {
  int64_t group = 0;
  const std::string format = qformat(s.quantFormat(0, &group));
  const std::string index = s.elementType(1);
  const int64_t vocab = s.dim(0, 0), d = s.dim(0, 1);
  if (format.empty() || group < 1 || s.numInputs() != 2 ||
      s.intAttr("axis", 0) != 0 || s.type(0).getRank() != 2 || vocab <= 0 ||
      d <= 0 || s.elementType(2) != "float" ||
      (index != "ingot_k::i64" && index != "ingot_k::i32"))
    return refuse(whyNot, "the quantised gather template takes rows of a "
                          "q8/q4/q4m table along axis 0 with i32/i64 ids");
  const int64_t block = warpMultiple(d, 256);
  TemplateInstance inst;
  TemplateLaunch &l = inst.launches.emplace_back();
  l.symbol = symbol, l.blockSize = block;
  l.grid = {{1, 1, 1}};
  l.args = {pointerArg(0), pointerArg(1), pointerArg(2)};
  inst.source = wrapperHead(symbol, block,
                            {pointerParam(s, 0), pointerParam(s, 1),
                             pointerParam(s, 2)}) +
                " {\n  ingot_k::embeddingRowsQuant<" + std::to_string(d) +
                ", " + std::to_string(block) + ", " + format + ", " +
                std::to_string(group) + ", " + index + ">(p0, p1, p2, " +
                std::to_string(vocab) + "LL);\n}\n";
  return inst;
}

} // namespace ingot::codegen::detail
