//===- CudaTemplateStep.cpp - Reading a plan step for its template --------===//
#include "codegen/cuda/CudaTemplateStep.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cstdio>

using namespace mlir;

namespace ingot::codegen::detail {

TemplateStep::TemplateStep(plan::KernelOp op) : op_(op) {
  for (Value v : op.getIns())
    operands_.push_back(v);
  numInputs_ = operands_.size();
  for (Value v : op.getOuts())
    operands_.push_back(v);
}

bool TemplateStep::present(size_t i) const {
  return i < operands_.size() &&
         !isa_and_nonnull<plan::NoneOp>(operands_[i].getDefiningOp());
}

MemRefType TemplateStep::type(size_t i) const {
  return present(i) ? dyn_cast<MemRefType>(operands_[i].getType())
                    : MemRefType();
}

int64_t TemplateStep::dim(size_t i, size_t axis) const {
  MemRefType t = type(i);
  if (!t || axis >= size_t(t.getRank()) || t.isDynamicDim(axis))
    return -1;
  return t.getDimSize(axis);
}

std::string TemplateStep::elementType(size_t i) const {
  MemRefType t = type(i);
  if (!t)
    return "";
  // A quantised weight (q8/q4/q4m/f8 blocks) has the logical f32 memref
  // type of the tensor it decodes to; its bytes are not floats.
  if (Operation *def = operands_[i].getDefiningOp())
    if (isa<plan::ParamOp>(def) && def->hasAttr("quant"))
      return "";
  Type e = t.getElementType();
  if (e.isF32())
    return "float";
  if (e.isBF16())
    return "ingot_k::Bf16";
  if (e.isF16())
    return "ingot_k::F16";
  if (e.isInteger(64))
    return "ingot_k::i64";
  if (e.isInteger(32))
    return "ingot_k::i32";
  return "";
}

std::string TemplateStep::quantFormat(size_t i, int64_t *group) const {
  if (!present(i))
    return "";
  Operation *def = operands_[i].getDefiningOp();
  if (!isa_and_nonnull<plan::ParamOp>(def))
    return "";
  auto quant = def->getAttrOfType<StringAttr>("quant");
  auto g = def->getAttrOfType<IntegerAttr>("group");
  if (!quant || !g)
    return "";
  *group = g.getInt();
  return quant.str();
}

/// [offset, offset + bytes) of an arena slice; false for other buffers.
static bool arenaRange(Value v, int64_t *begin, int64_t *end) {
  auto alloc = dyn_cast_or_null<plan::AllocOp>(v.getDefiningOp());
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!alloc || !type)
    return false;
  auto offset = alloc->getAttrOfType<IntegerAttr>("offset");
  auto maxShape = alloc->getAttrOfType<DenseI64ArrayAttr>("max_shape");
  if (!offset || !maxShape)
    return false;
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t d : maxShape.asArrayRef())
    bytes *= d;
  *begin = offset.getInt(), *end = *begin + bytes;
  return true;
}

bool TemplateStep::overlaps(size_t i, size_t j) const {
  if (!present(i) || !present(j))
    return false;
  if (operands_[i] == operands_[j])
    return true;
  int64_t b0, e0, b1, e1;
  return arenaRange(operands_[i], &b0, &e0) &&
         arenaRange(operands_[j], &b1, &e1) && b0 < e1 && b1 < e0;
}

int64_t TemplateStep::intAttr(const char *name, int64_t fallback) const {
  auto a = op_.getArgs().getAs<IntegerAttr>(name);
  return a ? a.getInt() : fallback;
}

double TemplateStep::floatAttr(const char *name, double fallback) const {
  Attribute a = op_.getArgs().get(name);
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return double(i.getInt());
  return fallback;
}

std::string TemplateStep::strAttr(const char *name,
                                  const std::string &fallback) const {
  auto a = op_.getArgs().getAs<StringAttr>(name);
  return a ? a.str() : fallback;
}

std::string floatLiteral(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%af", static_cast<double>(float(v)));
  return text;
}

std::string doubleLiteral(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

std::string wrapperHead(const std::string &symbol, int64_t block,
                        const std::vector<std::string> &params) {
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     std::to_string(block) + ") " + symbol + "(";
  for (size_t i = 0; i < params.size(); ++i)
    head += (i ? ", " : "") + params[i];
  return head + ")";
}

std::string pointerParam(const TemplateStep &s, size_t i) {
  const bool input = i < s.numInputs();
  std::string type = s.elementType(i);
  int64_t group = 0;
  if (type.empty() && !s.quantFormat(i, &group).empty())
    type = "ingot_k::u8"; // the blocks' bytes (quant.cuh decodes them)
  return std::string(input ? "const " : "") + type + " *p" + std::to_string(i);
}

GpuArgSpec pointerArg(size_t i) { return {GpuArgKind::Pointer, int64_t(i), 0}; }

std::optional<TemplateInstance> refuse(std::string *whyNot,
                                       const std::string &why) {
  *whyNot = why;
  return std::nullopt;
}

int64_t activationIndex(const TemplateStep &s) {
  static const char *const names[] = {"none", "relu", "silu", "gelu",
                                      "gelu_tanh"};
  const std::string act = s.strAttr("activation", "none");
  for (int64_t i = 0; i < 5; ++i)
    if (act == names[i])
      return i;
  return -1;
}

int64_t warpMultiple(int64_t n, int64_t cap) {
  const int64_t m = (n + 31) / 32 * 32;
  return m < 32 ? 32 : (m > cap ? cap : m);
}

} // namespace ingot::codegen::detail
